package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.tensor.GgmlType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm convert} on a checkpoint with a vision tower writes the projector file beside the model. */
class ConvertMmprojCliTest {
    static final Path TINY_VL = Path.of("src/test/resources/fixtures/qwen35/tiny-vl");
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");

    @Test
    void visionCheckpointGetsAnMmprojBesideTheModel(@TempDir Path dir) {
        Path out = dir.resolve("tiny-vl-int8.gguf");
        CliRunner r = CliRunner.run("convert", TINY_VL.toString(), "-o", out.toString(), "--quant", "int8");
        assertEquals(0, r.exitCode(), r.err());
        Path mmproj = dir.resolve("mmproj-tiny-vl-int8.gguf");
        assertTrue(r.out().contains("wrote " + mmproj), r.out());
        try (GgufFile g = GgufFile.open(mmproj)) {
            assertEquals("clip", g.metadata().requireString("general.architecture"));
            assertEquals("qwen3vl_merger", g.metadata().requireString("clip.projector_type"));
            assertEquals(GgmlType.Q8_0, g.tensorInfos().get("mm.2.weight").type());
            assertEquals(GgmlType.F16, g.tensorInfos().get("v.blk.1.ffn_down.weight").type());
        }
    }

    @Test
    void noMmprojAndTypeOptions(@TempDir Path dir) {
        CliRunner r = CliRunner.run("convert", TINY_VL.toString(), "-o", dir.resolve("a.gguf").toString(), "--no-mmproj");
        assertEquals(0, r.exitCode(), r.err());
        assertFalse(Files.exists(dir.resolve("mmproj-a.gguf")));
        r = CliRunner.run("convert", TINY_VL.toString(), "-o", dir.resolve("b.gguf").toString(), "--mmproj-type", "bf16",
                "--quant", "bf16"); // under int8 (the default) the merger is Q8_0
        assertEquals(0, r.exitCode(), r.err());
        try (GgufFile g = GgufFile.open(dir.resolve("mmproj-b.gguf"))) {
            assertEquals(GgmlType.BF16, g.tensorInfos().get("mm.0.weight").type());
        }
        r = CliRunner.run("convert", TINY_VL.toString(), "-o", dir.resolve("c.gguf").toString(), "--mmproj-type", "q4");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("--mmproj-type"), r.err());
        assertFalse(Files.exists(dir.resolve("c.gguf")));
        // a text-only checkpoint: no projector file
        r = CliRunner.run("convert", TINY_A.toString(), "-o", dir.resolve("t.gguf").toString());
        assertEquals(0, r.exitCode(), r.err());
        assertFalse(Files.exists(dir.resolve("mmproj-t.gguf")));
    }
}
