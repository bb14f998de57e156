package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kernel (up to 1100 rows: many items of 6 queries, several key panels, partial last ones) against a direct float64 evaluation of softmax(q k^T s) v, for odd sizes and head dims. */
class BidirectionalAttentionTest {

    @ParameterizedTest
    @CsvSource({"1,1,16", "5,2,16", "37,3,72", "70,2,64", "33,1,20", "1100,1,16"})
    void matchesTheDefinition(int n, int heads, int dim) {
        SplittableRandom rnd = new SplittableRandom(n * 31L + dim);
        int width = heads * dim;
        int stride = 3 * width + 5; // rows with some other data after q, k, v
        int start = 3;
        int rows = start + n + 2;
        float[] x = new float[rows * stride];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        var layout = new BidirectionalAttention.Layout(stride, 0, width, 2 * width, heads, dim);
        float scale = (float) (1 / Math.sqrt(dim));
        float[] out = new float[rows * width];
        try (Parallel pool = new Parallel(2)) {
            BidirectionalAttention.attend(pool, x, layout, start, n, scale, out);
        }
        double worst = 0;
        for (int h = 0; h < heads; h++) {
            for (int r = 0; r < n; r++) {
                double[] p = new double[n];
                double max = Double.NEGATIVE_INFINITY;
                for (int s = 0; s < n; s++) {
                    double dot = 0;
                    for (int d = 0; d < dim; d++) {
                        dot += (double) x[(start + r) * stride + h * dim + d] * x[(start + s) * stride + width + h * dim + d];
                    }
                    p[s] = dot * scale;
                    max = Math.max(max, p[s]);
                }
                double sum = 0;
                for (int s = 0; s < n; s++) {
                    p[s] = Math.exp(p[s] - max);
                    sum += p[s];
                }
                for (int d = 0; d < dim; d++) {
                    double o = 0;
                    for (int s = 0; s < n; s++) {
                        o += p[s] / sum * x[(start + s) * stride + 2 * width + h * dim + d];
                    }
                    worst = Math.max(worst, Math.abs(o - out[(start + r) * width + h * dim + d]));
                }
            }
        }
        assertTrue(worst < 2e-5, "max abs diff " + worst);
        // rows outside the segment are untouched
        for (int i = 0; i < start * width; i++) {
            assertTrue(out[i] == 0f);
        }
    }
}
