package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Snapshots, rollback and capacity of the per-sequence state, on tiny-b (both mixer kinds, two attention layers). */
class SequenceStateTest {

    private static Qwen35Model model() {
        return HuggingFaceLoader.load(Fixtures.path("qwen35/tiny-b"), 2);
    }

    @Test
    void rollbackToACheckpointThenADifferentContinuationEqualsFromScratch() {
        int[] ids = Fixtures.npy("qwen35/tiny-b/golden/long_prompt_ids.npy").toIntArray();
        try (Qwen35Model m = model()) {
            SequenceState state = m.newState(128);
            m.forward(state, ids, 0, 30, Qwen35Model.Logits.NONE);
            SequenceState.Checkpoint at30 = state.checkpoint();
            m.forward(state, ids, 30, 40, Qwen35Model.Logits.NONE); // a branch we then abandon
            state.rollback(at30);
            assertEquals(30, state.position());
            int[] other = Arrays.copyOf(ids, 60);
            for (int i = 30; i < 60; i++) {
                other[i] = (ids[i] + 7) % 500;
            }
            float[] resumed = m.forward(state, other, 30, 30, Qwen35Model.Logits.ALL);
            float[] scratch = m.forward(m.newState(128), other, 0, 60, Qwen35Model.Logits.ALL);
            float[] scratchTail = Arrays.copyOfRange(scratch, 30 * 512, 60 * 512);
            float diff = Fixtures.maxAbsDiff(scratchTail, resumed, 0);
            assertTrue(diff <= 1e-4f, "max abs diff " + diff);
        }
    }

    @Test
    void aCopyIsIndependentOfItsOriginal() {
        int[] ids = Fixtures.npy("qwen35/tiny-b/golden/prompt_ids.npy").toIntArray();
        Npy.Array golden = Fixtures.npy("qwen35/tiny-b/golden/logits_full.npy");
        int vocab = golden.dim(1);
        int[] other = ids.clone();
        for (int i = 0; i < other.length; i++) {
            other[i] = (ids[i] + 7) % 500;
        }
        try (Qwen35Model m = model()) {
            SequenceState original = m.newState(64);
            m.forward(original, ids, 0, 20, Qwen35Model.Logits.NONE);
            SequenceState copy = original.copy();
            // The original starts over with other tokens, rewriting every position the copy reads, so a conv
            // window, recurrent state or KV cache shared between the two would change the copy's logits.
            original.reset();
            m.forward(original, other, 0, other.length, Qwen35Model.Logits.NONE);
            float[] fromCopy = m.forward(copy, ids, 20, 21, Qwen35Model.Logits.LAST);
            assertEquals(41, copy.position());
            // Against the reference's logits, not bit-exactly against a second run of our own: the Vector API
            // leaves the lane order of reduceLanes(ADD) unspecified, and HotSpot adds the lanes in sequence
            // until C2 compiles VectorMath.dot and in another order after, so two runs of one computation
            // can differ in the last bits (5e-7 seen). A shared buffer moves these logits by 0.02 to 2, far
            // beyond the fixture's float32 contract of 1e-3.
            float[] expected = Arrays.copyOfRange(golden.floats(), 40 * vocab, 41 * vocab);
            float diff = Fixtures.maxAbsDiff(expected, fromCopy, 0);
            assertTrue(diff <= 1e-3f, "max abs diff " + diff);
        }
    }

    @Test
    void theKvCacheGrowsOnDemandAndCapacityIsEnforcedBeforeAnythingChanges() {
        int[] ids = Fixtures.npy("qwen35/tiny-b/golden/long_prompt_ids.npy").toIntArray();
        try (Qwen35Model m = model()) {
            SequenceState state = m.newState(1000);
            int[] longer = new int[600];
            for (int i = 0; i < longer.length; i++) {
                longer[i] = ids[i % ids.length];
            }
            float[] all = m.prefill(state, longer, ChunkPlan.maxChunk(256), false);
            assertEquals(600, state.position());
            float[] single = m.forward(m.newState(600), longer, 0, 600, Qwen35Model.Logits.LAST);
            assertTrue(Fixtures.maxAbsDiff(single, all, 0) <= 1e-4f);

            SequenceState small = m.newState(50);
            m.forward(small, ids, 0, 40, Qwen35Model.Logits.NONE);
            EdgeLmException e = assertThrows(EdgeLmException.class,
                    () -> m.forward(small, ids, 40, 11, Qwen35Model.Logits.LAST));
            assertTrue(e.getMessage().contains("51 tokens needed") && e.getMessage().contains("capacity is 50"), e.getMessage());
            assertEquals(40, small.position());
            float[] after = m.forward(small, ids, 40, 10, Qwen35Model.Logits.LAST);
            float[] reference = m.forward(m.newState(50), ids, 0, 50, Qwen35Model.Logits.LAST);
            assertTrue(Fixtures.maxAbsDiff(reference, after, 0) <= 1e-4f);
        }
    }

    @Test
    void tokenIdsOutsideTheVocabularyAreRejected() {
        try (Qwen35Model m = model()) {
            SequenceState state = m.newState(8);
            EdgeLmException e = assertThrows(EdgeLmException.class,
                    () -> m.forward(state, new int[] {1, 512}, 0, 2, Qwen35Model.Logits.LAST));
            assertTrue(e.getMessage().contains("512"), e.getMessage());
            assertEquals(0, state.position());
        }
    }
}
