package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The fused kernels against the textbook formulas, evaluated in double. */
class DeltaRuleAndAttentionTest {

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
        for (int[] dims : new int[][] {{32, 32}, {16, 40}, {8, 7}}) {
            int dk = dims[0];
            int dv = dims[1];
            float[] state = new float[3 + dk * dv];
            double[][] ref = new double[dk][dv];
            for (int step = 0; step < 20; step++) {
                float[] q = random(r, dk, 0.3);
                float[] k = random(r, dk, 0.3);
                float[] v = random(r, dv, 1);
                float decay = (float) (0.5 + 0.5 * r.nextDouble());
                float beta = (float) r.nextDouble();
                float[] out = new float[dv + 1];
                DeltaRule.step(state, 3, dk, dv, q, 0, k, 0, v, 0, decay, beta, out, 1);
                // S = decay S; kv = S^T k; S += k (beta (v - kv))^T; o = S^T q
                double[] kv = new double[dv];
                for (int i = 0; i < dk; i++) {
                    for (int j = 0; j < dv; j++) {
                        ref[i][j] *= decay;
                        kv[j] += ref[i][j] * k[i];
                    }
                }
                for (int i = 0; i < dk; i++) {
                    for (int j = 0; j < dv; j++) {
                        ref[i][j] += k[i] * beta * (v[j] - kv[j]);
                    }
                }
                for (int j = 0; j < dv; j++) {
                    double o = 0;
                    for (int i = 0; i < dk; i++) {
                        o += ref[i][j] * q[i];
                    }
                    assertEquals(o, out[1 + j], 1e-4, "dk=" + dk + " dv=" + dv + " step " + step + " column " + j);
                }
            }
            for (int i = 0; i < dk; i++) {
                for (int j = 0; j < dv; j++) {
                    assertEquals(ref[i][j], state[3 + i * dv + j], 1e-4);
                }
            }
        }
    }

    @Test
    void attentionIsASoftmaxWeightedSumOfTheVisibleValues() {
        SplittableRandom r = new SplittableRandom(5);
        int dim = 24;
        int stride = 2 * dim; // two heads per row; attend with the second
        int positions = 9;
        float[] keys = random(r, positions * stride, 1);
        float[] values = random(r, positions * stride, 1);
        float[] q = random(r, dim, 1);
        float scale = 0.7f;
        for (int visible = 1; visible <= positions; visible++) {
            float[] out = new float[dim];
            CausalAttention.attend(q, 0, keys, values, stride, dim, dim, visible, scale, new float[positions], out, 0);
            double[] w = new double[visible];
            double sum = 0;
            for (int j = 0; j < visible; j++) {
                double s = 0;
                for (int d = 0; d < dim; d++) {
                    s += (double) q[d] * keys[j * stride + dim + d];
                }
                w[j] = Math.exp(s * scale);
                sum += w[j];
            }
            for (int d = 0; d < dim; d++) {
                double o = 0;
                for (int j = 0; j < visible; j++) {
                    o += w[j] / sum * values[j * stride + dim + d];
                }
                assertEquals(o, out[d], 1e-5, "visible " + visible + " dim " + d);
            }
        }
    }
}
