package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.format.npy.Npy;
import dev.edgelm.tensor.quant.Q4_0Matrix;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Files written by llama.cpp itself load in EdgeLM and give llama.cpp's logits. */
class GgufMiniParityTest {
    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");

    static float[] logits(Path gguf, int[] ids) {
        try (Qwen35Model m = GgufLoader.load(gguf, 2)) {
            return m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
        }
    }

    @Test
    void bf16FileInFloat32MatchesTheFloat32Reference() {
        int[] ids = Npy.read(MINI.resolve("prompt_ids.npy")).toIntArray();
        Npy.Array ref = Npy.read(MINI.resolve("logits-F32.npy"));
        Path file = MINI.resolve("qwen35-mini-BF16.gguf");
        try (Qwen35Model m = GgufLoader.load(file, 2)) {
            Qwen35Config c = m.config();
            assertEquals(256, c.hiddenSize());
            assertEquals("LLLF", c.layerPattern());
            assertEquals(2, c.linearKeyHeads());
            assertEquals(4, c.linearValueHeads());
            assertEquals(128, c.linearValueDim());
            assertEquals(64, c.rotaryDim());
            assertEquals(1024, c.vocabSize());
            assertTrue(c.valueHeadsTiled());
            assertTrue(!c.tiedEmbeddings());
        }
        float[] got = logits(file, ids);
        int vocab = ref.dim(1);
        float maxAbs = Logit.maxAbsDiff(ref.floats(), got);
        int same = Logit.sameArgmax(ref.floats(), got, ids.length, vocab);
        System.out.printf("mini BF16 (float32 compute) vs logits-F32: max abs %.2e, same top-1 %d/64%n", maxAbs, same);
        assertTrue(maxAbs <= 1e-3, "max abs " + maxAbs);
        assertEquals(ids.length, same);
    }

    /**
     * Every llama.cpp-written format (computed with float activations but for the Q4_0 tensors, whose prefill
     * rounds them to int8 blocks) lands within the README's bounds for
     * such an engine: max abs about 0.25 from llama.cpp's own logits for that file, and the same top-1 where
     * llama.cpp's top-1/top-2 gap exceeds 0.1.
     */
    @ParameterizedTest
    @ValueSource(strings = {"BF16", "Q8_0", "Q5_0", "Q4_1", "Q4_0", "Q3_K_M", "Q2_K"})
    void everyFormatMatchesLlamaCpp(String format) {
        int[] ids = Npy.read(MINI.resolve("prompt_ids.npy")).toIntArray();
        Npy.Array ref = Npy.read(MINI.resolve("logits-" + format + ".npy"));
        Npy.Array f32 = Npy.read(MINI.resolve("logits-F32.npy"));
        float[] got = logits(MINI.resolve("qwen35-mini-" + format + ".gguf"), ids);
        int vocab = ref.dim(1);
        float maxAbs = Logit.maxAbsDiff(ref.floats(), got);
        int checked = 0;
        int same = 0;
        for (int t = 0; t < ids.length; t++) {
            if (Logit.topGap(ref.floats(), t, vocab) > 0.1f) {
                checked++;
                same += Logit.argmax(ref.floats(), t, vocab) == Logit.argmax(got, t, vocab) ? 1 : 0;
            }
        }
        System.out.printf("mini %-6s vs logits-%s: max abs %.3f, top-1 %d/%d where gap > 0.1 (%d/64 overall); "
                        + "vs logits-F32: max abs %.3f, mean KL %.1e%n", format, format, maxAbs, same, checked,
                Logit.sameArgmax(ref.floats(), got, ids.length, vocab), Logit.maxAbsDiff(f32.floats(), got),
                Logit.meanKl(f32.floats(), got, ids.length, vocab));
        assertTrue(maxAbs <= 0.25f, format + " max abs " + maxAbs);
        assertEquals(checked, same, format + ": top-1 differs where the gap exceeds 0.1");
    }

    /**
     * The Q4_0 file with its 64-token prompt prefilled at once: its Q4_0 matmuls round the activations to
     * int8 blocks as llama.cpp does, so it meets the README's tighter bounds for such an engine (max abs
     * about 0.1, same top-1 where the gap exceeds 0.05). Its output head is Q6_K, still multiplied in float.
     */
    @Test
    void q4_0PrefillRoundsActivationsLikeLlamaCpp() {
        assumeTrue(Q4_0Matrix.roundsPrefillActivations(), "Q4_0 prefill stays in float on this machine");
        int[] ids = Npy.read(MINI.resolve("prompt_ids.npy")).toIntArray();
        Npy.Array ref = Npy.read(MINI.resolve("logits-Q4_0.npy"));
        float[] got = logits(MINI.resolve("qwen35-mini-Q4_0.gguf"), ids);
        int vocab = ref.dim(1);
        float maxAbs = Logit.maxAbsDiff(ref.floats(), got);
        for (int t = 0; t < ids.length; t++) {
            if (Logit.topGap(ref.floats(), t, vocab) > 0.05f) {
                assertEquals(Logit.argmax(ref.floats(), t, vocab), Logit.argmax(got, t, vocab), "top-1 at " + t);
            }
        }
        assertTrue(maxAbs <= 0.1f, "max abs " + maxAbs);
    }
}
