package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.format.npy.Npy;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The forward pass against the PyTorch reference's float32 goldens (fixtures/qwen35/README.md):
 * logits within 1e-3 with the same argmax everywhere, intermediates within 1e-4, greedy ids identical.
 */
class Qwen35GoldenTest {
    private static final float LOGIT_TOLERANCE = 1e-3f;
    private static final float HIDDEN_TOLERANCE = 1e-4f;

    private static Qwen35Model load(String fixture, int threads) {
        return HuggingFaceLoader.load(Fixtures.path("qwen35/" + fixture), threads);
    }

    private static void assertLogits(Npy.Array expected, float[] actual, String what) {
        int vocab = expected.dim(1);
        assertEquals(expected.floats().length, actual.length, what + ": size");
        float diff = Fixtures.maxAbsDiff(expected.floats(), actual, 0);
        assertTrue(diff <= LOGIT_TOLERANCE, what + ": max abs diff " + diff);
        for (int t = 0; t < expected.dim(0); t++) {
            assertEquals(Fixtures.argmax(expected.floats(), t * vocab, vocab), Fixtures.argmax(actual, t * vocab, vocab),
                    what + ": argmax at position " + t);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void wholePromptInOnePass(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/prompt_ids.npy").toIntArray();
        try (Qwen35Model m = load(fixture, 2)) {
            float[] logits = m.forward(m.newState(64), ids, 0, ids.length, Qwen35Model.Logits.ALL);
            assertLogits(Fixtures.npy("qwen35/" + fixture + "/golden/logits_full.npy"), logits, fixture + " full");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void tokenByToken(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/prompt_ids.npy").toIntArray();
        try (Qwen35Model m = load(fixture, 1)) {
            float[] logits = m.prefill(m.newState(64), ids, ChunkPlan.maxChunk(1), true);
            assertLogits(Fixtures.npy("qwen35/" + fixture + "/golden/logits_token_by_token.npy"), logits, fixture + " token by token");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void chunked17_13_11(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/prompt_ids.npy").toIntArray();
        try (Qwen35Model m = load(fixture, 2)) {
            float[] logits = m.prefill(m.newState(64), ids, ChunkPlan.explicit(17, 13, 11), true);
            assertLogits(Fixtures.npy("qwen35/" + fixture + "/golden/logits_chunked.npy"), logits, fixture + " chunked");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void longPromptAcrossA64TokenBoundary(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/long_prompt_ids.npy").toIntArray();
        try (Qwen35Model m = load(fixture, 2)) {
            float[] logits = m.prefill(m.newState(100), ids, ChunkPlan.defaultPlan(), true);
            assertLogits(Fixtures.npy("qwen35/" + fixture + "/golden/long_logits_full.npy"), logits, fixture + " long");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void greedyContinuation(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/prompt_ids.npy").toIntArray();
        int[] expectedIds = Fixtures.npy("qwen35/" + fixture + "/golden/greedy_ids.npy").toIntArray();
        Npy.Array stepLogits = Fixtures.npy("qwen35/" + fixture + "/golden/greedy_step_logits.npy");
        int vocab = stepLogits.dim(1);
        try (Qwen35Model m = load(fixture, 2)) {
            SequenceState state = m.newState(ids.length + expectedIds.length);
            float[] logits = m.prefill(state, ids, ChunkPlan.defaultPlan(), false);
            int[] generated = new int[expectedIds.length];
            float[] allSteps = new float[expectedIds.length * vocab];
            for (int i = 0; i < generated.length; i++) {
                System.arraycopy(logits, 0, allSteps, i * vocab, vocab);
                generated[i] = Fixtures.argmax(logits, 0, vocab);
                logits = m.forward(state, generated, i, 1, Qwen35Model.Logits.LAST);
            }
            assertArrayEquals(expectedIds, generated, fixture + " greedy ids");
            assertLogits(stepLogits, allSteps, fixture + " greedy step logits");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void intermediatesPerLayer(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/prompt_ids.npy").toIntArray();
        Npy.Array hidden = Fixtures.npy("qwen35/" + fixture + "/golden/hidden_states.npy");
        Npy.Array mixer = Fixtures.npy("qwen35/" + fixture + "/golden/mixer_out.npy");
        Npy.Array finalNorm = Fixtures.npy("qwen35/" + fixture + "/golden/final_norm.npy");
        int layers = mixer.dim(0);
        int n = ids.length;
        int h = hidden.dim(2);
        float[][] seenHidden = new float[layers + 1][];
        float[][] seenMixer = new float[layers][];
        float[][] seenNorm = new float[1][];
        try (Qwen35Model m = load(fixture, 2)) {
            m.forward(m.newState(64), ids, 0, n, Qwen35Model.Logits.ALL, new Qwen35Model.Trace() {
                @Override
                public void embeddings(float[] x, int count) {
                    seenHidden[0] = Arrays.copyOf(x, count * h);
                }

                @Override
                public void layer(int layer, float[] residual, int count) {
                    seenHidden[layer + 1] = Arrays.copyOf(residual, count * h);
                }

                @Override
                public void mixer(int layer, float[] mixerOut, int count) {
                    seenMixer[layer] = Arrays.copyOf(mixerOut, count * h);
                }

                @Override
                public void finalNorm(float[] normed, int count) {
                    seenNorm[0] = Arrays.copyOf(normed, count * h);
                }
            });
        }
        int slab = n * h;
        for (int l = 0; l <= layers; l++) {
            float[] expected = Arrays.copyOfRange(hidden.floats(), l * slab, (l + 1) * slab);
            float diff = Fixtures.maxAbsDiff(expected, seenHidden[l], 0);
            assertTrue(diff <= HIDDEN_TOLERANCE, fixture + " hidden_states[" + l + "] max abs diff " + diff);
        }
        for (int l = 0; l < layers; l++) {
            float[] expected = Arrays.copyOfRange(mixer.floats(), l * slab, (l + 1) * slab);
            float diff = Fixtures.maxAbsDiff(expected, seenMixer[l], 0);
            assertTrue(diff <= HIDDEN_TOLERANCE, fixture + " mixer_out[" + l + "] max abs diff " + diff);
        }
        float diff = Fixtures.maxAbsDiff(finalNorm.floats(), seenNorm[0], 0);
        assertTrue(diff <= HIDDEN_TOLERANCE, fixture + " final_norm max abs diff " + diff);
    }
}
