package dev.edgelm.format.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
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

    @Test
    void everyTruncationOfAValidFileIsAnErrorNamingTheFile() throws IOException {
        // written by numpy: '<i8', shape (41,), a 128-byte header then 41 * 8 bytes of data
        byte[] whole = Files.readAllBytes(Fixtures.path("qwen35/tiny-b/golden/prompt_ids.npy"));
        assertEquals(128 + 41 * 8, whole.length);
        Path file = dir.resolve("cut.npy");
        for (int length = 0; length < whole.length; length++) {
            Files.write(file, Arrays.copyOf(whole, length));
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> Npy.read(file), length + " bytes");
            assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        }
        Files.write(file, Arrays.copyOf(whole, whole.length - 4));
        assertEquals(file + ": truncated: shape (41,) of <i8 needs 328 bytes of data, the file has 324",
                assertThrows(EdgeLmException.class, () -> Npy.read(file)).getMessage());
        Files.write(file, Arrays.copyOf(whole, 60));
        assertEquals(file + ": truncated .npy header: 118 bytes declared, 50 present",
                assertThrows(EdgeLmException.class, () -> Npy.read(file)).getMessage());
    }

    @Test
    void aTruncatedFloatFileIsAnErrorNamingTheFile() throws IOException {
        byte[] whole = Files.readAllBytes(Fixtures.path("qwen35/tiny-b/golden/final_norm.npy"));
        Path file = dir.resolve("cut.npy");
        Files.write(file, Arrays.copyOf(whole, whole.length - 1));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Npy.read(file));
        assertTrue(e.getMessage().startsWith(file + ": truncated: shape (41, 96) of <f4 needs 15744 bytes"), e.getMessage());
    }

    @Test
    void aMalformedShapeIsAnErrorNamingTheFile() throws IOException {
        Path file = dir.resolve("bad.npy");
        Npy.writeFloat32(file, new float[] {1f, 2f}, 2);
        String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        Files.write(file, text.replace("(2,)", "(x,)").getBytes(StandardCharsets.ISO_8859_1));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Npy.read(file));
        assertEquals(file + ": malformed .npy shape (x,)", e.getMessage());
    }
}
