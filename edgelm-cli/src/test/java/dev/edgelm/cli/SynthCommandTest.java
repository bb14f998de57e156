package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.synth.SyntheticModel;
import dev.edgelm.synth.SynthShape;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SynthCommandTest {
    @TempDir
    Path dir;

    private void assertFails(String message, String... args) throws IOException {
        CliRunner r = CliRunner.run(args);
        assertEquals(1, r.exitCode(), r.err());
        assertEquals("error: " + message, r.err().strip());
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "nothing written");
        }
    }

    @Test
    void badArgumentsAreClearErrorsAndWriteNothing() throws IOException {
        Path out = dir.resolve("m.gguf");
        assertFails("--size: '7b' is not one of 0.8b, 2b, 4b", "synth", "--size", "7b", "-o", out.toString());
        assertFails("--quant: 'q4_k' is not one of bf16, int8, int4", "synth", "--size", "0.8b", "--quant", "q4_k", "-o", out.toString());
        Path missing = dir.resolve("no/such/folder/m.gguf");
        assertFails(missing + ": folder " + missing.toAbsolutePath().getParent() + " does not exist",
                "synth", "--size", "0.8b", "-o", missing.toString());
        assertFails(dir + ": is a folder; -o needs a file name", "synth", "--size", "0.8b", "-o", dir.toString());
    }

    @Test
    void aMissingSizeIsAUsageError() {
        CliRunner r = CliRunner.run("synth", "-o", dir.resolve("m.gguf").toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("Missing required option: '--size=SIZE'"), r.err());
    }

    @Test
    void inspectShowsTheMixedInt4Recipe() {
        SynthShape tiny = new SynthShape("tiny", "tiny", 64, 4, 2, 1, 32, 2, 2, 32, 128, 320, true, 280);
        Path f = dir.resolve("tiny-int4.gguf");
        SyntheticModel.write(tiny, QuantRecipe.INT4, 0, f, w -> { }, null, 1);
        CliRunner r = CliRunner.run("inspect", f.toString());
        assertEquals(0, r.exitCode(), r.err());
        // Q4_0: 3 linear layers x (qkv, gate, alpha, beta, out + 3 MLP) and 1 full (q, k, v, o + 3 MLP);
        // Q8_0: the embedding; F32: 3 x (2 norms, conv, ssm_a, dt_bias, ssm_norm) + (4 norms) + the final norm
        assertTrue(r.out().matches("(?s).*F32\\s+23 tensors.*"), r.out());
        assertTrue(r.out().matches("(?s).*Q4_0\\s+31 tensors.*"), r.out());
        assertTrue(r.out().matches("(?s).*Q8_0\\s+1 tensors.*"), r.out());
        assertTrue(r.out().contains("name 'tiny synthetic (random weights, seed 0)'"), r.out());
        assertTrue(r.out().contains("pre qwen35, 320 tokens (20 control, 6 user-defined, 38 unused), 0 merges"), r.out());
        assertTrue(r.out().contains("stop tokens:  282 <|im_end|>, 280 <|endoftext|>"), r.out());
    }
}
