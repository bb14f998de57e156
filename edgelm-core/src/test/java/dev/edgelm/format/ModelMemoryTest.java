package dev.edgelm.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ModelMemoryTest {

    @ParameterizedTest
    @EnumSource(ModelMemory.Mode.class)
    void holdsTheFileByteForByteAndReadOnly(ModelMemory.Mode mode, @TempDir Path dir) throws Exception {
        // a size that is neither a page nor a read slice multiple, larger than one read slice
        byte[] content = new byte[(17 << 20) + 12345];
        new SplittableRandom(7).nextBytes(content);
        Path file = dir.resolve("model.bin");
        Files.write(file, content);
        MemorySegment held;
        try (Arena arena = Arena.ofShared(); FileChannel ch = FileChannel.open(file)) {
            held = ModelMemory.load(ch, arena, mode);
            assertEquals(content.length, held.byteSize());
            assertArrayEquals(content, held.toArray(ValueLayout.JAVA_BYTE));
            assertTrue(held.isReadOnly());
            if (mode == ModelMemory.Mode.MAPPED) {
                assertTrue(held.isMapped());
            } else if (System.getenv("EDGELM_WEIGHTS") == null && ModelMemory.preferredMode() == ModelMemory.Mode.HUGE_PAGES) {
                assertTrue(!held.isMapped(), "where the system offers huge pages the file is read, not mapped");
            }
            MemorySegment h = held;
            assertThrows(IllegalArgumentException.class, () -> h.set(ValueLayout.JAVA_BYTE, 0, (byte) 1));
        }
        assertTrue(!held.scope().isAlive(), "closing the arena releases the memory");
    }

    @ParameterizedTest
    @EnumSource(ModelMemory.Mode.class)
    void anEmptyFileIsAnEmptySegment(ModelMemory.Mode mode, @TempDir Path dir) throws Exception {
        Path file = dir.resolve("empty.bin");
        Files.write(file, new byte[0]);
        try (Arena arena = Arena.ofShared(); FileChannel ch = FileChannel.open(file)) {
            assertEquals(0, ModelMemory.load(ch, arena, mode).byteSize());
        }
    }

    @org.junit.jupiter.api.Test
    void aFileLargerThanTheAvailableMemoryIsNotCopied() {
        assertTrue(ModelMemory.fitsInAvailableMemory(1 << 20));
        if (Files.exists(Path.of("/proc/meminfo"))) {
            assertTrue(!ModelMemory.fitsInAvailableMemory(Long.MAX_VALUE / 2));
        }
    }

    @org.junit.jupiter.api.Test
    void mmapCanBeAskedFor() {
        String before = System.getProperty("edgelm.weights");
        try {
            System.setProperty("edgelm.weights", "mmap");
            assertEquals(ModelMemory.Mode.MAPPED, ModelMemory.preferredMode());
        } finally {
            if (before == null) {
                System.clearProperty("edgelm.weights");
            } else {
                System.setProperty("edgelm.weights", before);
            }
        }
    }
}
