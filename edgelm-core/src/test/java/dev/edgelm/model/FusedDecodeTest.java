package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticModel;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Decode with the projections of one input fused into one parallel section ({@link Qwen35Model#fusedDecode})
 * against one section per matrix, on two threads: the same logits at every step (the same kernels per row;
 * 1e-5 of the largest logit for the interpreter's lane sums before C2 compiles, as in {@link BatchForwardTest})
 * and the same greedy tokens. The shape is large enough that every fused projection but the DeltaNet gates
 * (four rows) is a parallel section of its own when not fused.
 */
class FusedDecodeTest {
    @TempDir
    Path dir;

    @Test
    void fusedDecodeMatchesOneSectionPerMatrix() {
        SynthShape shape = new SynthShape("small", "small", 256, 4, 4, 2, 64, 2, 4, 64, 768, 320, true, 280);
        boolean before = Qwen35Model.fusedDecode;
        for (QuantRecipe recipe : new QuantRecipe[] {QuantRecipe.INT8, QuantRecipe.INT4}) {
            Path f = dir.resolve("small-" + recipe + ".gguf");
            SyntheticModel.write(shape, recipe, 5, f, w -> {}, null, 1);
            try (Qwen35Model m = ModelLoader.open(f, 2).model()) {
                int vocab = m.config().vocabSize();
                int[] prompt = new SplittableRandom(7).ints(9, 0, vocab).toArray();
                SequenceState fused = m.newState(32);
                m.forward(fused, prompt, 0, prompt.length, Qwen35Model.Logits.NONE);
                SequenceState apart = fused.copy();
                float[] a = new float[vocab];
                float[] b = new float[vocab];
                int[] token = {prompt[prompt.length - 1]};
                for (int step = 0; step < 6; step++) {
                    Qwen35Model.fusedDecode = true;
                    m.forwardLast(fused, token, 0, 1, a);
                    Qwen35Model.fusedDecode = false;
                    m.forwardLast(apart, token, 0, 1, b);
                    BatchForwardTest.assertClose(b, a, recipe + " step " + step);
                    token[0] = BatchForwardTest.argmax(b);
                    assertEquals(token[0], BatchForwardTest.argmax(a), recipe + " greedy token, step " + step);
                }
            } finally {
                Qwen35Model.fusedDecode = before;
            }
        }
    }
}
