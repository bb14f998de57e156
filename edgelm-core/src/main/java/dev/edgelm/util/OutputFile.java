package dev.edgelm.util;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;

/**
 * An output path given on the command line ({@code -o FILE}), checked before any work starts: not a folder, in a
 * folder that exists, not one of the command's input files, not a symbolic link, and a regular file or nothing yet
 * (then it is written through {@link AtomicFiles}: temporary file, then rename). A FIFO or a character device such
 * as {@code /dev/stdout} or {@code /dev/null} is not replaced by a regular file: outputs that can be streamed are
 * written straight into it ({@link #writeThrough}); the others refuse it.
 *
 * @param path         the output path
 * @param writeThrough true to write into the existing FIFO or device, without a temporary file
 */
public record OutputFile(Path path, boolean writeThrough) {
    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFSOCK = 0140000;

    /** An output that must be a regular file (a GGUF model). {@code option} names it in errors, e.g. "-o". */
    public static OutputFile regular(Path target, String option, Collection<Path> inputs) {
        return check(target, option, inputs, false);
    }

    /** An output that may also be a FIFO or a character device such as {@code /dev/stdout} (a NumPy array). */
    public static OutputFile streamable(Path target, String option, Collection<Path> inputs) {
        return check(target, option, inputs, true);
    }

    private static OutputFile check(Path target, String option, Collection<Path> inputs, boolean streamable) {
        boolean link = Files.isSymbolicLink(target);
        boolean systemLink = link && isSystemPath(target);
        if (link && !(streamable && systemLink)) {
            String to;
            try {
                to = String.valueOf(Files.readSymbolicLink(target));
            } catch (IOException e) {
                to = "?";
            }
            throw new EdgeLmException(target + ": is a symbolic link (to " + to + "); " + option
                    + " does not write through links: give the file itself, or remove the link");
        }
        if (Files.isDirectory(target)) {
            throw new EdgeLmException(target + ": is a folder; " + option + " needs a file name");
        }
        if (Files.exists(target)) {
            for (Path input : inputs) {
                try {
                    if (Files.exists(input) && Files.isSameFile(target, input)) {
                        throw new EdgeLmException(target + ": is an input of this command (" + input + "); " + option
                                + " must name another file");
                    }
                } catch (IOException e) {
                    // an input that cannot be compared is not the output
                }
            }
            if (!Files.isRegularFile(target)) {
                String kind = kind(target);
                if (streamable && (kind.equals("a FIFO") || kind.equals("a character device"))) {
                    return new OutputFile(target, true);
                }
                throw new EdgeLmException(target + ": is not a regular file (" + kind + "); " + option
                        + (streamable ? " writes a regular file, a FIFO or a character device such as /dev/stdout"
                                : " writes a regular file only"));
            }
            if (systemLink) {
                // e.g. /dev/stdout redirected to a file: write into it, it is not ours to rename
                return new OutputFile(target, true);
            }
        }
        Path parent = target.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new EdgeLmException(target + ": folder " + parent + " does not exist");
        }
        return new OutputFile(target, false);
    }

    /** Writes the content: atomically, or straight into the FIFO or device. */
    public void write(AtomicFiles.Content content) throws IOException {
        if (writeThrough) {
            try (OutputStream out = Files.newOutputStream(path, StandardOpenOption.WRITE)) {
                content.writeTo(out);
            }
        } else {
            AtomicFiles.write(path, content);
        }
    }

    private static boolean isSystemPath(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        return abs.startsWith("/dev") || abs.startsWith("/proc");
    }

    private static String kind(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode");
            return switch (mode & S_IFMT) {
                case S_IFIFO -> "a FIFO";
                case S_IFCHR -> "a character device";
                case S_IFBLK -> "a block device";
                case S_IFSOCK -> "a socket";
                default -> "not a regular file";
            };
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? "a regular file" : "a special file";
        }
    }
}
