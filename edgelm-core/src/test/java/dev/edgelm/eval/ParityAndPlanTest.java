package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.ChunkPlan;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ParityAndPlanTest {

    @Test
    void liteRtLaddersCutTheWayTheSignaturesFit() {
        assertArrayEquals(new int[] {64, 8, 4, 2, 1}, SweepPlan.parse("ladder").sizes(79));
        assertArrayEquals(new int[] {64, 4, 4, 4, 1, 1, 1}, SweepPlan.parse("reduced").sizes(79));
        assertArrayEquals(new int[] {16, 16, 5}, SweepPlan.parse("fixed:16").sizes(37));
        assertArrayEquals(new int[] {37}, SweepPlan.parse("oneshot").sizes(37));
        int[] r = SweepPlan.parse("random:3").sizes(50);
        assertEquals(50, Arrays.stream(r).sum());
        assertArrayEquals(r, SweepPlan.parse("random:3").sizes(50));
    }

    @Test
    void handMadeLogitsGiveTheExpectedFigures() {
        float[] ref = {0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 9};
        float[] test = {0, 1, 2, 3, 4, 6, 5, 0, 0, 0, 0, 0, 0, 9};
        Parity.Result r = Parity.compare(ref, test, 2, 7);
        assertEquals(0.5, r.top1());
        assertEquals(1.0, r.top5()); // the same five on both rows
        assertEquals(1.0, r.positions().get(1).pearson(), 1e-12);
        assertEquals(1.0, r.maxAbsDiff());
        // KL of softmax([...,5,6]) vs softmax([...,6,5]) by hand: (e^6 - e^5)(6 - 5) / sum e^i, i = 0..6
        double z = 0;
        for (int i = 0; i <= 6; i++) {
            z += Math.exp(i);
        }
        assertEquals((Math.exp(6) - Math.exp(5)) / z, r.positions().get(0).kl(), 1e-12);
    }

    /** EdgeLM's BF16 mini model against llama.cpp's logits of the same prompt (fixtures/gguf/mini/logits-BF16.npy). */
    @Test
    void miniBf16AgainstLlamaCppLogits() {
        int[] ids = Npy.read(LlamaFixtures.MINI.resolve("prompt_ids.npy")).toIntArray();
        Npy.Array ref = Npy.read(LlamaFixtures.MINI.resolve("logits-BF16.npy"));
        try (ScoringModel m = ScoringModel.open(LlamaFixtures.MINI.resolve("qwen35-mini-BF16.gguf"), 2)) {
            float[] ours = m.model().prefill(m.model().newState(ids.length), ids, ChunkPlan.defaultPlan(), true);
            Parity.Result r = Parity.compare(ref.floats(), ours, ids.length, m.vocabSize());
            assertEquals(1.0, r.top1());
            assertTrue(r.pearson() > 0.9999, "Pearson " + r.pearson());
            assertTrue(r.meanKl() < 1e-4, "KL " + r.meanKl());
        }
    }
}
