package dev.edgelm.util;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.LinkOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Output files that are never seen half-written: the bytes go to a hidden temporary file in the target's
 * folder, which is synced to disk and then renamed onto the target. A failure deletes the temporary file
 * and leaves the target as it was.
 *
 * <p>A temporary file is named {@code .<target>.<pid>-<random>.tmp} after the process writing it. SIGINT and
 * SIGTERM delete it (a shutdown hook of {@link #write}; {@code GgufWriter} has its own); after a SIGKILL or a
 * power cut it stays, and the next write of the same target deletes the temporary files of processes that no
 * longer run, with a note on standard error.
 */
public final class AtomicFiles {

    /** Writes a file's content. */
    @FunctionalInterface
    public interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    private AtomicFiles() {}

    /** Writes {@code target} through a temporary sibling: {@link #createTemporarySibling}, then {@link #commit}. */
    public static void write(Path target, Content content) throws IOException {
        Path temp = createTemporarySibling(target);
        Thread cleanup = new Thread(() -> deleteQuietly(temp), "atomic-file-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            try (OutputStream out = Files.newOutputStream(temp, StandardOpenOption.WRITE)) {
                content.writeTo(out);
            }
            commit(temp, target);
        } catch (Throwable t) {
            deleteQuietly(temp);
            throw t;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs or has run: the file is gone or renamed
            }
        }
    }

    /**
     * A new empty hidden file next to {@code target}. Unlike {@link Files#createTempFile}, which makes it
     * readable by its owner only, the file gets the usual permissions (umask), and so does the target.
     */
    public static Path createTemporarySibling(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        removeStaleTemporaries(target);
        long pid = ProcessHandle.current().pid();
        while (true) {
            String name = "." + target.getFileName() + "." + pid + "-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + ".tmp";
            try {
                return Files.createFile(dir.resolve(name));
            } catch (FileAlreadyExistsException e) {
                // another writer drew the same name: draw again
            }
        }
    }

    /**
     * Syncs {@code temp} to disk, then renames it onto {@code target}, replacing any file there: atomically
     * where the file system can, so a reader sees the old file or the new one. The sync first means that
     * after a crash the target's name never points at data that did not reach the disk.
     */
    public static void commit(Path temp, Path target) throws IOException {
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        try {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Deletes the temporary files of {@code target} left by processes that no longer run (killed while writing);
     * returns them. Those of live processes, and files not named by this class, are left alone.
     */
    public static List<Path> removeStaleTemporaries(Path target) {
        Path dir = target.toAbsolutePath().getParent();
        String prefix = "." + target.getFileName() + ".";
        List<Path> removed = new ArrayList<>();
        if (dir == null || !Files.isDirectory(dir)) {
            return removed;
        }
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(dir, p -> {
            String n = p.getFileName().toString();
            return n.startsWith(prefix) && n.endsWith(".tmp");
        })) {
            for (Path p : siblings) {
                String middle = p.getFileName().toString().substring(prefix.length());
                Matcher m = TEMP_NAME.matcher(middle);
                if (!m.matches() || m.group(1).length() > 18) {
                    continue;
                }
                long pid = Long.parseLong(m.group(1));
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) || !Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try {
                    Files.deleteIfExists(p);
                    removed.add(p);
                    System.err.println("edgelm: removed " + p + ", left by an interrupted run (process " + pid + ")");
                } catch (IOException e) {
                    System.err.println("edgelm: cannot remove " + p + ", left by an interrupted run: " + e.getMessage());
                }
            }
        } catch (IOException e) {
            // a folder that cannot be listed cannot be written either: the write reports it
        }
        return removed;
    }

    private static final Pattern TEMP_NAME = Pattern.compile("(\\d+)-[0-9a-f]+\\.tmp");

    /** Deletes a temporary file after a failure, which is the error worth reporting. */
    public static void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException ignored) {
            // the caller reports the failure that made the file useless
        }
    }
}
