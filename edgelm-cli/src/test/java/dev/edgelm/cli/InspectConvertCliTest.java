package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class InspectConvertCliTest {
    static final Path MINI_BF16 = Path.of("src/test/resources/fixtures/gguf/mini/qwen35-mini-BF16.gguf");
    static final Path TINY_B = Path.of("src/test/resources/fixtures/qwen35/tiny-b");

    private static String run(String... args) {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(new PrintWriter(out));
        assertEquals(0, cli.execute(args), out.toString());
        return out.toString();
    }

    @Test
    void inspectDescribesALlamaCppFile() {
        String s = run("inspect", MINI_BF16.toString());
        // figures from the fixture's README and manifest
        assertTrue(s.contains("architecture: qwen35"), s);
        assertTrue(s.contains("4 (LLLF"), s);
        assertTrue(s.contains("hidden 256, mlp 512"), s);
        assertTrue(s.contains("2 key heads x 128, 4 value heads x 128, conv 4, value heads tiled"), s);
        assertTrue(s.contains("vocab:        1024, untied"), s);
        assertTrue(s.matches("(?s).*BF16\\s+33 tensors.*"), s);
        assertTrue(s.matches("(?s).*F32\\s+23 tensors.*"), s);
        assertTrue(s.contains("pre qwen35, 1024 tokens"), s);
        assertTrue(s.contains("768 merges"), s);
        assertTrue(s.contains("chat template: yes"), s);
        assertTrue(s.contains("stop tokens:  1023"), s);
    }

    @Test
    void inspectDescribesACheckpointFolder() {
        String s = run("inspect", TINY_B.toString());
        assertTrue(s.contains("Hugging Face checkpoint"), s);
        assertTrue(s.contains("8 (LLLF LLLF"), s);
        assertTrue(s.contains("value heads grouped"), s);
        assertTrue(s.contains("tokenizer:    none"), s);
    }

    @Test
    void convertWritesAFileAndRejectsAnUnknownRecipe(@TempDir Path dir) {
        Path out = dir.resolve("b.gguf");
        String s = run("convert", TINY_B.toString(), "-o", out.toString());
        assertTrue(s.startsWith("wrote "), s);
        assertTrue(Files.isRegularFile(out));
        assertTrue(run("inspect", out.toString()).contains("value heads tiled"));
        assertEquals(1, Main.execute("convert", TINY_B.toString(), "-o", dir.resolve("c.gguf").toString(), "--quant", "q3"));
        assertFalse(Files.exists(dir.resolve("c.gguf")));
    }
}
