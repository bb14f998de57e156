package dev.edgelm.format.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpyTest {

    @TempDir
    Path dir;

    @Test
    void aWrittenArrayReadsBack() {
        Path file = dir.resolve("a.npy");
        Npy.writeFloat32(file, new float[] {1.5f, -2f, 0f, 3.25f, 7f, -0.5f}, 2, 3);
        Npy.Array a = Npy.read(file);
        assertArrayEquals(new long[] {2, 3}, a.shape());
        assertArrayEquals(new float[] {1.5f, -2f, 0f, 3.25f, 7f, -0.5f}, a.floats());
    }

    @Test
    void aWriteThatCannotCompleteNamesTheFileAndLeavesNoTemporaryFile() throws IOException {
        Path target = Files.createDirectories(dir.resolve("taken.npy"));
        Files.writeString(target.resolve("inside"), "a folder that is not empty cannot be replaced");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Npy.writeFloat32(target, new float[] {1f}, 1));
        assertTrue(e.getMessage().startsWith(target + ": cannot write"), e.getMessage());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("taken.npy"), files.map(p -> p.getFileName().toString()).toList());
        }
    }
}
