package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The decoder with an image in the prompt against tiny-vl's goldens, fed the reference's own image embeddings:
 * 3-D positions and rope delta exact, logits within 1e-3 with the same argmax, greedy ids identical; chunk
 * boundaries inside the image-token run change nothing.
 */
class MultimodalGoldenTest {
    static final String GOLDEN = "qwen35/tiny-vl/golden/";
    static final int IMAGE_PAD = 506;
    static Qwen35Model model;
    static int[] ids;
    static ImageEmbedding image;

    @BeforeAll
    static void load() {
        model = HuggingFaceLoader.load(Fixtures.path("qwen35/tiny-vl"), 2);
        ids = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
        // grid_thw [1, 8, 32] patches -> 4 x 16 merged tokens
        image = new ImageEmbedding(Fixtures.npy(GOLDEN + "image_embeds.npy").floats(), 4, 16);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    static ModelInput input() {
        return ModelInput.withImages(ids, IMAGE_PAD, List.of(image), 128, 0);
    }

    static void assertLogits(float[] expected, float[] actual, int rows, String what) {
        int vocab = 512;
        float diff = Logit.maxAbsDiff(expected, actual);
        System.out.printf("%s: max abs diff %.3g%n", what, diff);
        assertTrue(diff <= 1e-3f, what + ": max abs diff " + diff);
        for (int t = 0; t < rows; t++) {
            assertEquals(Logit.argmax(expected, t, vocab), Logit.argmax(actual, t, vocab), what + ": argmax at " + t);
        }
    }

    @Test
    void positionsAndDeltaExact() {
        Npy.Array golden = Fixtures.npy(GOLDEN + "mm_position_ids.npy");
        assertArrayEquals(golden.toIntArray(), input().positions());
        SequenceState s = model.newState(128);
        model.forward(s, input(), 0, ids.length, Qwen35Model.Logits.NONE);
        assertEquals(Fixtures.npy(GOLDEN + "mm_rope_delta.npy").toIntArray()[0], s.ropeDelta());
    }

    @Test
    void logitsInOnePass() {
        float[] logits = model.forward(model.newState(128), input(), 0, ids.length, Qwen35Model.Logits.ALL);
        assertLogits(Fixtures.npy(GOLDEN + "mm_logits.npy").floats(), logits, ids.length, "mm one pass");
    }

    /** Chunk boundaries at 10 and 50 fall inside the 64-token image run (indices 8..71), 75 after it. */
    @Test
    void chunkedThroughTheImageEqualsOnePass() {
        float[] once = model.forward(model.newState(128), input(), 0, ids.length, Qwen35Model.Logits.ALL);
        for (ChunkPlan plan : List.of(ChunkPlan.explicit(10, 40, 25, 7), ChunkPlan.maxChunk(1), ChunkPlan.maxChunk(17))) {
            SequenceState s = model.newState(128);
            float[] chunked = model.prefill(s, input(), plan, true);
            float diff = Logit.maxAbsDiff(once, chunked);
            assertTrue(diff <= 1e-4f, plan + ": " + diff);
            assertEquals(-48, s.ropeDelta(), plan.toString());
        }
    }

    @Test
    void greedyContinuationUsesTheDelta() {
        int[] expected = Fixtures.npy(GOLDEN + "mm_greedy_ids.npy").toIntArray();
        float[] expectedLogits = Fixtures.npy(GOLDEN + "mm_greedy_step_logits.npy").floats();
        SequenceState s = model.newState(128);
        float[] logits = model.prefill(s, input(), ChunkPlan.maxChunk(32), false);
        int[] got = new int[expected.length];
        float[] steps = new float[expected.length * 512];
        for (int i = 0; i < expected.length; i++) {
            System.arraycopy(logits, 0, steps, i * 512, 512);
            got[i] = Logit.argmax(logits, 0, 512);
            logits = model.forward(s, new int[] {got[i]}, 0, 1, Qwen35Model.Logits.LAST);
        }
        assertArrayEquals(expected, got);
        assertLogits(expectedLogits, steps, expected.length, "mm greedy steps");
    }

    @Test
    void snapshotKeepsTheDelta() {
        SequenceState s = model.newState(128);
        model.forward(s, input(), 0, ids.length, Qwen35Model.Logits.NONE);
        SequenceState.Checkpoint c = s.checkpoint();
        SequenceState copy = s.copy();
        float[] a = model.forward(s, new int[] {5}, 0, 1, Qwen35Model.Logits.LAST);
        s.reset();
        assertEquals(0, s.ropeDelta());
        model.forward(s, new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
                52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78,
                79, 80, 81, 82, 83, 84, 85}, 0, 85, Qwen35Model.Logits.NONE);
        // not a rollback target (different tokens), only shows the delta comes back with the checkpoint
        s.rollback(c);
        assertEquals(-48, s.ropeDelta());
        assertEquals(-48, copy.ropeDelta());
        float[] b = model.forward(copy, new int[] {5}, 0, 1, Qwen35Model.Logits.LAST);
        assertTrue(Logit.maxAbsDiff(a, b) <= 1e-5f);
    }

    @Test
    void runLengthMismatchNamesTheImageAndBothCounts() {
        int[] shorter = Arrays.copyOfRange(ids, 1, ids.length);
        shorter[20] = 7; // splits the run: 12 + 51 tokens
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> ModelInput.withImages(shorter, IMAGE_PAD, List.of(image), 128, 0));
        assertTrue(e.getMessage().contains("image 1 has 64 tokens") && e.getMessage().contains("has 13"), e.getMessage());
        EdgeLmException none = assertThrows(EdgeLmException.class,
                () -> ModelInput.withImages(ids, IMAGE_PAD, List.of(), 128, 0));
        assertTrue(none.getMessage().contains("more image-token runs"), none.getMessage());
    }
}
