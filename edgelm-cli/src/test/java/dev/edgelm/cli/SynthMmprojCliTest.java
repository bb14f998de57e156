package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm synth --mmproj}: a bad projector type is refused before anything is written. */
class SynthMmprojCliTest {
    @Test
    void badProjectorTypeWritesNothing(@TempDir Path dir) throws Exception {
        CliRunner r = CliRunner.run("synth", "--size", "0.8b", "--mmproj", "--mmproj-type", "q4", "-o", dir.resolve("m.gguf").toString());
        assertEquals(1, r.exitCode(), r.err());
        assertEquals("error: --mmproj-type: 'q4' is not one of f16, bf16, f32", r.err().strip());
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }
}
