package dev.edgelm.util;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
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
        try {
            try (OutputStream out = Files.newOutputStream(temp, StandardOpenOption.WRITE)) {
                content.writeTo(out);
            }
            commit(temp, target);
        } catch (Throwable t) {
            deleteQuietly(temp);
            throw t;
        }
    }

    /**
     * A new empty hidden file next to {@code target}. Unlike {@link Files#createTempFile}, which makes it
     * readable by its owner only, the file gets the usual permissions (umask), and so does the target.
     */
    public static Path createTemporarySibling(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        while (true) {
            String name = "." + target.getFileName() + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp";
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

    /** Deletes a temporary file after a failure, which is the error worth reporting. */
    public static void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException ignored) {
            // the caller reports the failure that made the file useless
        }
    }
}
