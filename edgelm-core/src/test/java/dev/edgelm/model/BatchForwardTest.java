package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticModel;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Qwen35Model#forwardBatch} against one-token {@link Qwen35Model#forwardLast} calls on each sequence
 * alone (the single-stream decode path, itself checked against the PyTorch goldens): same logits, same
 * states afterwards. Sequences sit at different positions (prompts of different lengths) so that every
 * per-sequence part (conv window, recurrent state, KV cache, rotary position) is exercised.
 *
 * <p>Bound: the batch multiplies each row with the same operations in the same order as a one-token call,
 * so once both paths are compiled the results are bit-identical; before, the interpreter's lane reductions
 * may associate differently from the compiled ones (see docs/model.md, Numerics), hence 1e-5 relative
 * to the largest logit, and the greedy token of every step must agree exactly.
 */
class BatchForwardTest {
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    static final Path TINY_CHAT = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");

    @TempDir
    Path dir;

    @Test
    void tinyAFloatWeightsMatchOneSequenceAtATime() {
        try (Qwen35Model m = ModelLoader.open(TINY_A, 2).model()) {
            compare(m, 4, 12);
        }
    }

    @Test
    void tinyChatBf16MatchesOneSequenceAtATime() {
        try (Qwen35Model m = ModelLoader.open(TINY_CHAT, 1).model()) {
            compare(m, 3, 10);
        }
    }

    /** Q8_0 (the 4-token kernel and its remainder), with value heads tiled, on two threads. */
    @Test
    void syntheticInt8MatchesOneSequenceAtATime() {
        SynthShape tiny = new SynthShape("tiny", "tiny", 64, 8, 2, 1, 32, 2, 4, 32, 128, 320, true, 280);
        Path f = dir.resolve("tiny-int8.gguf");
        SyntheticModel.write(tiny, QuantRecipe.INT8, 3, f, w -> {}, null, 1);
        try (Qwen35Model m = ModelLoader.open(f, 2).model()) {
            compare(m, 6, 8);
        }
    }

    /** Q8_0 and Q4_0 with nine sequences: the 8-token kernels and a remainder of one. */
    @Test
    void syntheticInt8AndInt4NineSequencesMatchOneSequenceAtATime() {
        SynthShape tiny = new SynthShape("tiny", "tiny", 64, 8, 2, 1, 32, 2, 4, 32, 128, 320, true, 280);
        for (QuantRecipe recipe : new QuantRecipe[] {QuantRecipe.INT8, QuantRecipe.INT4}) {
            Path f = dir.resolve("tiny-" + recipe + "-9.gguf");
            SyntheticModel.write(tiny, recipe, 3, f, w -> {}, null, 1);
            try (Qwen35Model m = ModelLoader.open(f, 2).model()) {
                compare(m, 9, 4);
            }
        }
    }

    private static void compare(Qwen35Model m, int sequences, int steps) {
        int vocab = m.config().vocabSize();
        SplittableRandom random = new SplittableRandom(42);
        SequenceState[] batch = new SequenceState[sequences];
        SequenceState[] alone = new SequenceState[sequences];
        for (int i = 0; i < sequences; i++) {
            int[] prompt = random.ints(3 + 5 * i, 0, vocab).toArray();
            batch[i] = m.newState(64);
            m.forward(batch[i], prompt, 0, prompt.length, Qwen35Model.Logits.NONE);
            alone[i] = batch[i].copy();
        }
        float[] logits = new float[sequences * vocab];
        float[] one = new float[vocab];
        int[] tokens = random.ints(sequences, 0, vocab).toArray();
        for (int step = 0; step < steps; step++) {
            m.forwardBatch(batch, tokens, logits);
            for (int i = 0; i < sequences; i++) {
                m.forwardLast(alone[i], tokens, i, 1, one);
                float[] got = Arrays.copyOfRange(logits, i * vocab, (i + 1) * vocab);
                assertClose(one, got, "step " + step + ", sequence " + i);
                assertEquals(alone[i].position(), batch[i].position());
                // the next token: greedy from the single-stream logits
                tokens[i] = argmax(one);
                assertEquals(tokens[i], argmax(got), "greedy token, step " + step + ", sequence " + i);
            }
        }
    }

    static void assertClose(float[] expected, float[] actual, String where) {
        float scale = 0;
        for (float v : expected) {
            scale = Math.max(scale, Math.abs(v));
        }
        for (int k = 0; k < expected.length; k++) {
            assertEquals(expected[k], actual[k], 1e-5f * scale, where + ", logit " + k);
        }
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    @Test
    void badBatchesAreRefusedBeforeAnythingChanges() {
        try (Qwen35Model m = ModelLoader.open(TINY_A, 1).model()) {
            int vocab = m.config().vocabSize();
            SequenceState a = m.newState(2);
            SequenceState b = m.newState(1);
            float[] logits = new float[2 * vocab];
            assertThrows(IllegalArgumentException.class, () -> m.forwardBatch(new SequenceState[] {a, a}, new int[] {1, 2}, logits));
            assertThrows(EdgeLmException.class, () -> m.forwardBatch(new SequenceState[] {a, b}, new int[] {1, vocab}, logits));
            m.forwardBatch(new SequenceState[] {a, b}, new int[] {1, 2}, logits);
            EdgeLmException full = assertThrows(EdgeLmException.class,
                    () -> m.forwardBatch(new SequenceState[] {a, b}, new int[] {1, 2}, logits));
            assertEquals(true, full.getMessage().contains("capacity"), full.getMessage());
            assertEquals(1, a.position());
            assertArrayEquals(new int[] {1, 1}, new int[] {a.position(), b.position()});
        }
    }
}
