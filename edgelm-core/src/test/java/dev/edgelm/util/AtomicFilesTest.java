package dev.edgelm.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {

    @TempDir
    Path dir;

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static AtomicFiles.Content failingAfterSomeBytes(Exception failure) {
        return out -> {
            out.write(new byte[10_000]);
            if (failure instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) failure;
        };
    }

    @Test
    void writesTheTargetAndLeavesNothingElse() throws IOException {
        Path target = dir.resolve("out.bin");
        AtomicFiles.write(target, out -> out.write("first".getBytes(StandardCharsets.UTF_8)));
        AtomicFiles.write(target, out -> out.write("second".getBytes(StandardCharsets.UTF_8)));
        assertEquals("second", Files.readString(target));
        assertEquals(List.of("out.bin"), names());
    }

    @Test
    void aFailingWriterLeavesNeitherAPartialTargetNorATemporaryFile() throws IOException {
        Path target = dir.resolve("out.bin");
        IOException io = new IOException("disk full");
        assertSame(io, assertThrows(IOException.class, () -> AtomicFiles.write(target, failingAfterSomeBytes(io))));
        RuntimeException bug = new UncheckedIOException(new IOException("broken"));
        assertSame(bug, assertThrows(RuntimeException.class, () -> AtomicFiles.write(target, failingAfterSomeBytes(bug))));
        assertFalse(Files.exists(target));
        assertEquals(List.of(), names());
    }

    @Test
    void aFailingWriterLeavesAnExistingTargetAsItWas() throws IOException {
        Path target = Files.writeString(dir.resolve("out.bin"), "old");
        assertThrows(IOException.class, () -> AtomicFiles.write(target, failingAfterSomeBytes(new IOException("disk full"))));
        assertEquals("old", Files.readString(target));
        assertEquals(List.of("out.bin"), names());
    }

    @Test
    void theWrittenFileHasTheUsualPermissionsNotOwnerOnly() throws IOException {
        assumeTrue(Files.getFileAttributeView(dir, PosixFileAttributeView.class) != null, "POSIX permissions");
        Path plain = Files.createFile(dir.resolve("plain"));
        Path target = dir.resolve("atomic");
        AtomicFiles.write(target, out -> out.write(1));
        assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(target));
    }
}
