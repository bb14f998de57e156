package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
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
        try (Qwen35Model m = model()) {
            SequenceState a = m.newState(64);
            m.forward(a, ids, 0, 20, Qwen35Model.Logits.NONE);
            SequenceState b = a.copy();
            float[] fromA = m.forward(a, ids, 20, 21, Qwen35Model.Logits.LAST);
            m.forward(a, ids, 0, 5, Qwen35Model.Logits.NONE); // keep mutating the original
            float[] fromB = m.forward(b, ids, 20, 21, Qwen35Model.Logits.LAST);
            assertArrayEquals(fromA, fromB);
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
