package dev.edgelm.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.RowStreamWriter;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SyntheticModelTest {
    /**
     * 8 layers (LLLF LLLF), hidden 64, 2 heads / 1 KV head x 32, linear 2 key / 4 value heads x 32 (value
     * heads tiled), MLP 128, vocabulary 320 with the special tokens from 280.
     */
    static final SynthShape TINY = new SynthShape("tiny", "tiny", 64, 8, 2, 1, 32, 2, 4, 32, 128, 320, true, 280);
    static final SynthShape TINY_UNTIED = new SynthShape("tiny", "tiny", 64, 4, 2, 1, 32, 2, 2, 32, 96, 288, false, 256);

    @TempDir
    Path dir;

    private Path write(SynthShape shape, QuantRecipe recipe, long seed, int threads, String name) {
        Path out = dir.resolve(name);
        List<String> warnings = new ArrayList<>();
        SyntheticModel.write(shape, recipe, seed, out, warnings::add, null, threads);
        assertEquals(List.of(), warnings);
        return out;
    }

    @ParameterizedTest
    @EnumSource(QuantRecipe.class)
    void tensorsHaveTheLayoutShapesAndRecipeTypes(QuantRecipe recipe) {
        Path f = write(TINY, recipe, 1, 2, "tiny.gguf");
        GgmlType linear = Map.of(QuantRecipe.BF16, GgmlType.BF16, QuantRecipe.INT8, GgmlType.Q8_0, QuantRecipe.INT4, GgmlType.Q4_0).get(recipe);
        GgmlType embedding = recipe == QuantRecipe.BF16 ? GgmlType.BF16 : GgmlType.Q8_0;
        try (GgufFile g = GgufFile.open(f)) {
            // 6 linear-attention layers of 14 tensors, 2 full-attention layers of 11, embedding, final norm
            assertEquals(6 * 14 + 2 * 11 + 2, g.tensorInfos().size());
            assertNull(g.tensor("output.weight"), "tied");
            expect(g, "token_embd.weight", embedding, 64, 320);
            expect(g, "blk.0.attn_qkv.weight", linear, 64, 2 * 2 * 32 + 4 * 32);
            expect(g, "blk.0.attn_gate.weight", linear, 64, 4 * 32);
            expect(g, "blk.0.ssm_alpha.weight", linear, 64, 4);
            expect(g, "blk.0.ssm_beta.weight", linear, 64, 4);
            expect(g, "blk.0.ssm_conv1d.weight", GgmlType.F32, 4, 256);
            expect(g, "blk.0.ssm_a", GgmlType.F32, 4);
            expect(g, "blk.0.ssm_dt.bias", GgmlType.F32, 4);
            expect(g, "blk.0.ssm_norm.weight", GgmlType.F32, 32);
            expect(g, "blk.0.ssm_out.weight", linear, 128, 64);
            expect(g, "blk.3.attn_q.weight", linear, 64, 2 * 2 * 32);
            expect(g, "blk.3.attn_k.weight", linear, 64, 32);
            expect(g, "blk.3.attn_v.weight", linear, 64, 32);
            expect(g, "blk.3.attn_q_norm.weight", GgmlType.F32, 32);
            expect(g, "blk.3.attn_output.weight", linear, 64, 64);
            expect(g, "blk.7.ffn_down.weight", linear, 128, 64);
            expect(g, "blk.7.post_attention_norm.weight", GgmlType.F32, 64);
            expect(g, "output_norm.weight", GgmlType.F32, 64);
            assertEquals(recipe.fileType(), g.metadata().requireLong("general.file_type"));
        }
        assertFiniteLogitsNearUnitSpread(f);
    }

    private static void expect(GgufFile g, String name, GgmlType type, long... dims) {
        GgufTensor t = g.tensor(name);
        assertTrue(t != null, name + " missing");
        assertEquals(type, t.type(), name);
        assertArrayEquals(dims, t.info().dims(), name);
    }

    /** Loads the file as any model and runs a prefill: every logit finite, spread near 1, every layer finite. */
    private static void assertFiniteLogitsNearUnitSpread(Path f) {
        int[] ids = {72, 101, 108, 108, 111, 32, 281, 282, 5, 200, 0, 255};
        try (Qwen35Model m = ModelLoader.load(f, 2)) {
            int vocab = m.config().vocabSize();
            float[] maxAbsResidual = new float[1];
            float[] logits = m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL, new Qwen35Model.Trace() {
                public void embeddings(float[] x, int n) {}

                public void mixer(int layer, float[] out, int n) {}

                public void layer(int layer, float[] residual, int n) {
                    for (int i = 0; i < n * 64; i++) {
                        assertTrue(Float.isFinite(residual[i]), "layer " + layer);
                        maxAbsResidual[0] = Math.max(maxAbsResidual[0], Math.abs(residual[i]));
                    }
                }

                public void finalNorm(float[] normed, int n) {}
            });
            assertTrue(maxAbsResidual[0] < 100, "residual stream max " + maxAbsResidual[0]);
            for (int t = 0; t < ids.length; t++) {
                double sum = 0;
                double sq = 0;
                for (int v = 0; v < vocab; v++) {
                    float x = logits[t * vocab + v];
                    assertTrue(Float.isFinite(x));
                    sum += x;
                    sq += (double) x * x;
                }
                double std = Math.sqrt(sq / vocab - (sum / vocab) * (sum / vocab));
                assertTrue(std > 0.6 && std < 1.6, "position " + t + ": logit std " + std);
            }
        }
    }

    @Test
    void anUntiedShapeGetsAnOutputHead() {
        Path f = write(TINY_UNTIED, QuantRecipe.INT4, 3, 1, "untied.gguf");
        try (GgufFile g = GgufFile.open(f)) {
            expect(g, "output.weight", GgmlType.Q8_0, 64, 288);
            expect(g, "token_embd.weight", GgmlType.Q8_0, 64, 288);
            expect(g, "blk.0.ffn_up.weight", GgmlType.Q4_0, 64, 96);
        }
        assertFiniteLogitsNearUnitSpread(f);
    }

    @Test
    void sameSeedSameBytesWhateverTheThreadCount() throws IOException {
        byte[] a = Files.readAllBytes(write(TINY, QuantRecipe.INT4, 42, 1, "a.gguf"));
        byte[] b = Files.readAllBytes(write(TINY, QuantRecipe.INT4, 42, 3, "b.gguf"));
        byte[] c = Files.readAllBytes(write(TINY, QuantRecipe.INT4, 43, 2, "c.gguf"));
        assertArrayEquals(a, b);
        assertEquals(a.length, c.length);
        assertFalse(java.util.Arrays.equals(a, c), "another seed gives other weights");
    }

    @Test
    void valuesFollowTheDocumentedDistributions() {
        Path f = write(TINY, QuantRecipe.BF16, 5, 2, "values.gguf");
        try (GgufFile g = GgufFile.open(f)) {
            for (int layer : new int[] {0, 1, 2, 4}) {
                for (float negA : floats(g, "blk." + layer + ".ssm_a")) {
                    assertTrue(negA <= -1 && negA >= -16, "ssm_a " + negA);
                }
                for (float bias : floats(g, "blk." + layer + ".ssm_dt.bias")) {
                    double dt = Math.log1p(Math.exp(bias));
                    assertTrue(dt >= 0.999e-3 && dt <= 0.1001, "softplus(dt_bias) " + dt);
                }
                assertMoments(floats(g, "blk." + layer + ".ssm_conv1d.weight"), 0, 0.3);
                assertMoments(floats(g, "blk." + layer + ".ssm_norm.weight"), 1, 0.02);
            }
            assertMoments(floats(g, "token_embd.weight"), 0, 1 / Math.sqrt(64));
            assertMoments(floats(g, "blk.0.attn_qkv.weight"), 0, 0.02);
            assertMoments(floats(g, "blk.7.ffn_down.weight"), 0, 0.02);
            assertMoments(floats(g, "blk.3.attn_q_norm.weight"), 1, 0.02);
            assertMoments(floats(g, "output_norm.weight"), 1, 0.02);
        }
    }

    private static float[] floats(GgufFile g, String name) {
        return g.tensor(name).toFloatArray();
    }

    /** Mean and standard deviation within a few standard errors of the target. */
    private static void assertMoments(float[] v, double mean, double std) {
        double sum = 0;
        double sq = 0;
        for (float x : v) {
            sum += x;
            sq += (double) x * x;
        }
        double m = sum / v.length;
        double s = Math.sqrt(sq / v.length - m * m);
        assertEquals(mean, m, 5 * std / Math.sqrt(v.length) + 0.004 * Math.abs(mean), "mean");
        assertEquals(std, s, std * (5 / Math.sqrt(v.length) + 0.01), "std");
    }

    @Test
    void aFailedWriteLeavesNothingBehind() throws IOException {
        Path out = dir.resolve("never.gguf");
        Qwen35Config c = TINY.config();
        List<RowStreamWriter.Planned> plan = new ArrayList<>();
        for (var e : dev.edgelm.convert.Qwen35Tensors.of(c)) {
            plan.add(new RowStreamWriter.Planned(e, GgmlType.F32, (r, dst) -> {
                if (e.name().startsWith("blk.2.")) {
                    throw new IllegalStateException("source failed");
                }
            }));
        }
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> RowStreamWriter.write(out, new java.util.LinkedHashMap<>(), plan, null, 2));
        assertEquals("source failed", thrown.getMessage());
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }
}
