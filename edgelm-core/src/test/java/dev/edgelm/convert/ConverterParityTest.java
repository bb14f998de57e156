package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.GgufLoader;
import dev.edgelm.model.Logit;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.tensor.GgmlType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hugging Face checkpoints converted to GGUF give the PyTorch goldens: proves the writer's and loader's conventions. */
class ConverterParityTest {
    static final Path FIXTURES = Path.of("src/test/resources/fixtures/qwen35");

    @TempDir
    Path dir;

    static float[] logits(Path gguf, int[] ids) {
        try (Qwen35Model m = GgufLoader.load(gguf, 2)) {
            return m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
        }
    }

    static Path convert(Path dir, String fixture, QuantRecipe recipe, List<String> warnings) {
        Path out = dir.resolve(fixture + "-" + recipe.cliName() + ".gguf");
        GgufConverter.convert(FIXTURES.resolve(fixture), out, recipe, warnings::add, null);
        return out;
    }

    private void assertBf16Parity(String fixture) {
        List<String> warnings = new ArrayList<>();
        Path gguf = convert(dir, fixture, QuantRecipe.BF16, warnings);
        int[] ids = Npy.read(FIXTURES.resolve(fixture + "/golden/prompt_ids.npy")).toIntArray();
        Npy.Array golden = Npy.read(FIXTURES.resolve(fixture + "/golden/logits_full.npy"));
        float[] got = logits(gguf, ids);
        int vocab = golden.dim(1);
        float maxAbs = Logit.maxAbsDiff(golden.floats(), got);
        int same = Logit.sameArgmax(golden.floats(), got, ids.length, vocab);
        System.out.printf("%s bf16 GGUF vs golden: max abs %.2e, same top-1 %d/%d%n", fixture, maxAbs, same, ids.length);
        assertTrue(maxAbs <= 1e-3, fixture + " max abs " + maxAbs);
        assertEquals(ids.length, same);
        assertTrue(warnings.stream().anyMatch(w -> w.contains("no tokenizer.json")), warnings.toString());
    }

    @Test
    void tinyAConvertedAtBf16GivesTheGoldenLogits() {
        assertBf16Parity("tiny-a");
        try (GgufFile g = GgufFile.open(dir.resolve("tiny-a-bf16.gguf"))) {
            assertNull(g.tensor("output.weight"), "tied embeddings: no output.weight");
            assertEquals(GgmlType.BF16, g.tensor("token_embd.weight").type());
            assertEquals(GgmlType.F32, g.tensor("blk.0.ssm_conv1d.weight").type());
            assertArrayEquals(new long[] {4, 128 + 64}, g.tensor("blk.0.ssm_conv1d.weight").info().dims());
            assertEquals("none", g.metadata().requireString("tokenizer.ggml.model"));
            assertEquals(512, g.metadata().requireLong("qwen35.vocab_size"));
            assertEquals(32, g.metadata().requireLong("general.file_type"));
        }
    }

    @Test
    void tinyBConvertedAtBf16GivesTheGoldenLogitsThroughTheTiledValueHeads() {
        assertBf16Parity("tiny-b");
        try (GgufFile g = GgufFile.open(dir.resolve("tiny-b-bf16.gguf"))) {
            assertTrue(g.tensor("output.weight") != null, "untied head written");
            assertEquals(8, g.metadata().requireLong("qwen35.block_count"), "the MTP block is not written");
            assertFalse(g.tensorInfos().keySet().stream().anyMatch(n -> n.contains("nextn")));
            assertEquals(2, g.metadata().requireLong("qwen35.ssm.group_count"));
            assertEquals(4, g.metadata().requireLong("qwen35.ssm.time_step_rank"));
            assertEquals(128, g.metadata().requireLong("qwen35.ssm.inner_size"));
            for (GgufTensorInfo t : g.tensorInfos().values()) {
                assertEquals(t.nDims() == 2 && !t.name().contains("conv1d") ? GgmlType.BF16 : GgmlType.F32, t.type(), t.name());
            }
        }
    }
}
