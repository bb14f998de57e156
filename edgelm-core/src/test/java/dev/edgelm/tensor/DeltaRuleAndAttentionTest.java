package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The fused kernels against the textbook formulas, evaluated in double. */
class DeltaRuleAndAttentionTest {

    /**
     * A KV group's query heads attended together: each head equals the softmax-weighted sum computed in
     * double, on the grouped path (four heads, widths of whole four-vector steps) and on the per-head
     * fallback (other group sizes and widths), with queries interleaved with other data as in the model.
     */
    @ParameterizedTest
    @CsvSource({"4, 256", "4, 128", "4, 24", "2, 256", "3, 64"})
    void groupedHeadsEachGetTheirOwnSoftmaxWeightedSum(int group, int dim) {
        SplittableRandom r = new SplittableRandom(31 + group * dim);
        int stride = 2 * dim; // two KV heads per row; the group reads the second
        int qStride = 2 * dim; // each query followed by a gate, as q_proj lays them out
        int positions = 23;
        float[] keys = random(r, positions * stride, 1);
        float[] values = random(r, positions * stride, 1);
        float[] q = random(r, 1 + group * qStride, 1);
        float scale = (float) (1.5 / Math.sqrt(dim));
        for (int visible : new int[] {1, 3, 4, 9, positions}) {
            float[] out = new float[2 + group * dim];
            CausalAttention.attendGroup(new CausalAttention.GroupLayout(group, dim, qStride, stride, scale), q, 1, keys, values, dim, visible,
                new float[group * positions], out, 2);
            for (int h = 0; h < group; h++) {
                double[] expected = softmaxWeightedSum(q, 1 + h * qStride, keys, values, stride, dim, dim, visible, scale);
                for (int d = 0; d < dim; d++) {
                    assertEquals(expected[d], out[2 + h * dim + d], 1e-5, "head " + h + " visible " + visible + " dim " + d);
                }
            }
        }
    }

    /**
     * {@code softmax(q . k_j * scale) v_j} in double, the query at {@code q[qOff..]}, key and value j at
     * {@code keys/values[j * stride + headOff ..]}.
     */
    private static double[] softmaxWeightedSum(float[] q, int qOff, float[] keys, float[] values, int stride,
            int headOff, int dim, int visible, float scale) {
        double[] w = new double[visible];
        double sum = 0;
        for (int j = 0; j < visible; j++) {
            double s = 0;
            for (int d = 0; d < dim; d++) {
                s += (double) q[qOff + d] * keys[j * stride + headOff + d];
            }
            w[j] = Math.exp(s * scale);
            sum += w[j];
        }
        double[] o = new double[dim];
        for (int d = 0; d < dim; d++) {
            for (int j = 0; j < visible; j++) {
                o[d] += w[j] / sum * values[j * stride + headOff + d];
            }
        }
        return o;
    }

    /** Decays in [0.6, 1) and betas in [0, 1), one per step. */
    private static void randomGates(SplittableRandom r, float[] decay, float[] beta) {
        for (int t = 0; t < decay.length; t++) {
            decay[t] = (float) (0.6 + 0.4 * r.nextDouble());
            beta[t] = (float) r.nextDouble();
        }
    }

    private static float[] random(SplittableRandom r, int n, double scale) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) ((r.nextDouble() * 2 - 1) * scale);
        }
        return a;
    }

    @Test
    void deltaRuleMatchesTheTextbookOrderOverManySteps() {
        SplittableRandom r = new SplittableRandom(11);
        // dv = 83 covers a strip of four vectors, one of one vector and scalar columns (16-lane vectors)
        for (int[] dims : new int[][] {{32, 32}, {16, 40}, {8, 7}, {16, 83}, {128, 128}, {9, 70}}) {
            int dk = dims[0];
            int dv = dims[1];
            int steps = 20;
            // token rows laid out as in the model: q, k, v side by side, with a gap before and after
            int rowStride = 2 + 2 * dk + dv + 1;
            float[] qkv = new float[steps * rowStride];
            float[] decay = new float[steps * 2];
            float[] beta = new float[steps * 2];
            for (int t = 0; t < steps; t++) {
                System.arraycopy(random(r, dk, 0.3), 0, qkv, t * rowStride + 2, dk);
                System.arraycopy(random(r, dk, 0.3), 0, qkv, t * rowStride + 2 + dk, dk);
                System.arraycopy(random(r, dv, 1), 0, qkv, t * rowStride + 2 + 2 * dk, dv);
                decay[2 * t + 1] = (float) (0.5 + 0.5 * r.nextDouble());
                beta[2 * t + 1] = (float) r.nextDouble();
            }
            int outStride = dv + 1;
            float[] whole = new float[3 + dk * dv];
            float[] wholeOut = new float[steps * outStride];
            DeltaRule.scan(new DeltaRule.Layout(dk, dv, dv, rowStride, 2, outStride), steps, whole, qkv, decay, beta, wholeOut,
                new DeltaRule.Head(3, 2, 2 + dk, 2 + 2 * dk, 1, 1));
            float[] stepwise = new float[3 + dk * dv];
            float[] stepOut = new float[steps * outStride];
            double[][] ref = new double[dk][dv];
            for (int step = 0; step < steps; step++) {
                int row = step * rowStride;
                DeltaRule.scan(new DeltaRule.Layout(dk, dv, dv, 0, 0, 0), 1, stepwise, qkv, decay, beta, stepOut,
                new DeltaRule.Head(3, row + 2, row + 2 + dk, row + 2 + 2 * dk, 2 * step + 1, step * outStride + 1));
                float d = decay[2 * step + 1];
                float b = beta[2 * step + 1];
                // S = decay S; kv = S^T k; S += k (beta (v - kv))^T; o = S^T q
                double[] kv = new double[dv];
                for (int i = 0; i < dk; i++) {
                    for (int j = 0; j < dv; j++) {
                        ref[i][j] *= d;
                        kv[j] += ref[i][j] * qkv[row + 2 + dk + i];
                    }
                }
                for (int i = 0; i < dk; i++) {
                    for (int j = 0; j < dv; j++) {
                        ref[i][j] += qkv[row + 2 + dk + i] * b * (qkv[row + 2 + 2 * dk + j] - kv[j]);
                    }
                }
                for (int j = 0; j < dv; j++) {
                    double o = 0;
                    for (int i = 0; i < dk; i++) {
                        o += ref[i][j] * qkv[row + 2 + i];
                    }
                    String where = "dk=" + dk + " dv=" + dv + " step " + step + " column " + j;
                    assertEquals(o, stepOut[step * outStride + 1 + j], 1e-4, where);
                    // a run of tokens gives exactly what the tokens give one at a time
                    assertEquals(stepOut[step * outStride + 1 + j], wholeOut[step * outStride + 1 + j], 0.0, where);
                }
            }
            for (int i = 0; i < dk; i++) {
                for (int j = 0; j < dv; j++) {
                    assertEquals(ref[i][j], stepwise[3 + i * dv + j], 1e-4);
                    assertEquals(stepwise[3 + i * dv + j], whole[3 + i * dv + j], 0.0);
                }
            }
        }
    }

    /**
     * Columns of the state evolve independently, and the kernel sums each column in the same order whether
     * it falls in a strip of four vectors, of one vector or in the scalar tail: a column computed inside a
     * wide state equals, bit for bit, the same column run alone.
     */
    @Test
    void aColumnGivesTheSameBitsWhateverStripItFallsIn() {
        SplittableRandom r = new SplittableRandom(13);
        int dk = 33;
        int dv = 83;
        int steps = 6;
        float[] state = random(r, dk * dv, 0.5);
        float[] qkv = random(r, steps * (2 * dk + dv), 0.4);
        float[] decay = new float[steps];
        float[] beta = new float[steps];
        randomGates(r, decay, beta);
        int rowStride = 2 * dk + dv;
        float[] wide = state.clone();
        float[] wideOut = new float[steps * dv];
        DeltaRule.scan(new DeltaRule.Layout(dk, dv, dv, rowStride, 1, dv), steps, wide, qkv, decay, beta, wideOut,
                new DeltaRule.Head(0, 0, dk, 2 * dk, 0, 0));
        for (int j : new int[] {5, 70, 81}) { // in a four-vector strip, a one-vector strip, the scalar tail
            float[] alone = new float[dk];
            float[] one = new float[steps * (2 * dk + 1)];
            for (int i = 0; i < dk; i++) {
                alone[i] = state[i * dv + j];
            }
            for (int t = 0; t < steps; t++) {
                System.arraycopy(qkv, t * rowStride, one, t * (2 * dk + 1), 2 * dk);
                one[t * (2 * dk + 1) + 2 * dk] = qkv[t * rowStride + 2 * dk + j];
            }
            float[] aloneOut = new float[steps];
            DeltaRule.scan(new DeltaRule.Layout(dk, 1, 1, 2 * dk + 1, 1, 1), steps, alone, one, decay, beta, aloneOut,
                new DeltaRule.Head(0, 0, dk, 2 * dk, 0, 0));
            for (int t = 0; t < steps; t++) {
                assertEquals(wideOut[t * dv + j], aloneOut[t], 0.0, "column " + j + " step " + t);
            }
            for (int i = 0; i < dk; i++) {
                assertEquals(wide[i * dv + j], alone[i], 0.0, "column " + j + " row " + i);
            }
        }
    }

    /**
     * The model keeps state rows a cache line apart ({@code stateStride > dv}): the same run on padded rows
     * gives the same outputs and state, bit for bit, and leaves the padding alone.
     */
    @Test
    void paddedStateRowsGiveTheSameBitsAsPackedRows() {
        SplittableRandom r = new SplittableRandom(17);
        int dk = 40;
        int dv = 83;
        int stride = dv + 16;
        int steps = 5;
        float[] packed = random(r, dk * dv, 0.5);
        float[] padded = new float[dk * stride];
        Arrays.fill(padded, Float.NaN);
        for (int i = 0; i < dk; i++) {
            System.arraycopy(packed, i * dv, padded, i * stride, dv);
        }
        float[] qkv = random(r, steps * (2 * dk + dv), 0.4);
        float[] decay = new float[steps];
        float[] beta = new float[steps];
        randomGates(r, decay, beta);
        int rowStride = 2 * dk + dv;
        float[] packedOut = new float[steps * dv];
        float[] paddedOut = new float[steps * dv];
        DeltaRule.scan(new DeltaRule.Layout(dk, dv, dv, rowStride, 1, dv), steps, packed, qkv, decay, beta, packedOut,
                new DeltaRule.Head(0, 0, dk, 2 * dk, 0, 0));
        DeltaRule.scan(new DeltaRule.Layout(dk, dv, stride, rowStride, 1, dv), steps, padded, qkv, decay, beta, paddedOut,
                new DeltaRule.Head(0, 0, dk, 2 * dk, 0, 0));
        assertArrayEquals(packedOut, paddedOut, 0f);
        for (int i = 0; i < dk; i++) {
            for (int j = 0; j < stride; j++) {
                float v = padded[i * stride + j];
                if (j < dv) {
                    assertEquals(packed[i * dv + j], v, 0f, "row " + i + " column " + j);
                } else {
                    assertTrue(Float.isNaN(v), "padding at row " + i + " column " + j + " was written");
                }
            }
        }
    }

    /** Head widths around the vector paths: below one vector, the real 256, and with a remainder. */
    @ParameterizedTest
    @ValueSource(ints = {24, 128, 256, 272})
    void attentionIsASoftmaxWeightedSumOfTheVisibleValues(int dim) {
        SplittableRandom r = new SplittableRandom(5 + dim);
        int stride = 2 * dim; // two heads per row; attend with the second
        int positions = 37;
        float[] keys = random(r, positions * stride, 1);
        float[] values = random(r, positions * stride, 1);
        float[] q = random(r, dim, 1);
        float scale = (float) (2 / Math.sqrt(dim));
        for (int visible = 1; visible <= positions; visible++) {
            float[] out = new float[dim];
            CausalAttention.attend(q, 0, keys, values, stride, dim, dim, visible, scale, new float[positions], out, 0);
            double[] expected = softmaxWeightedSum(q, 0, keys, values, stride, dim, dim, visible, scale);
            for (int d = 0; d < dim; d++) {
                assertEquals(expected[d], out[d], 1e-5, "visible " + visible + " dim " + d);
            }
        }
    }
}
