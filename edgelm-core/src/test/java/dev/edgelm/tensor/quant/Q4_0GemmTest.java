package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Q4_0 prefill with int8 activations against ggml's arithmetic, computed here independently: each token's
 * activations quantised by ggml's reference Q8_0 quantiser ({@link Q8_0Matrix#quantize}), each block's
 * product summed exactly in integers from the stored nibbles and bytes, scaled by the two fp16 scales, in
 * double.
 */
class Q4_0GemmTest {
    @Test
    void matchesGgmlQ4_0TimesQ8_0() {
        assumeTrue(Q4_0Matrix.roundsPrefillActivations(), "no 512-bit vectors here: Q4_0 prefill stays in float");
        Random r = new Random(7);
        // rows not a multiple of the 8-row tile, token counts around the 32-token panel
        int rows = 43;
        int cols = 3 * 256;
        int blocks = cols / 32;
        float[] wf = new float[rows * cols];
        for (int i = 0; i < wf.length; i++) {
            wf[i] = (float) r.nextGaussian();
        }
        MemorySegment w = Arena.ofAuto().allocate(GgmlType.Q4_0.byteSize(cols) * rows);
        Q4_0Matrix.quantize(wf, 0, wf.length, w, 0);
        Q4_0Matrix m = new Q4_0Matrix(w, rows, cols);
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {16, 37, 64, 70}) {
                    float[] x = new float[n * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) (r.nextGaussian() * (1 + i % 5));
                    }
                    MemorySegment xq = Arena.ofAuto().allocate(GgmlType.Q8_0.byteSize(cols) * n);
                    Q8_0Matrix.quantize(x, 0, x.length, xq, 0);
                    int stride = rows + 3;
                    float[] out = new float[n * stride];
                    m.matmul(pool, x, n, out, stride, 2);
                    for (int t = 0; t < n; t++) {
                        for (int row = 0; row < rows; row++) {
                            double dot = 0;
                            double mag = 0;
                            for (int b = 0; b < blocks; b++) {
                                long wo = row * GgmlType.Q4_0.byteSize(cols) + b * 18L;
                                long xo = t * GgmlType.Q8_0.byteSize(cols) + b * 34L;
                                long sum = 0;
                                for (int j = 0; j < 16; j++) {
                                    int packed = w.get(ValueLayout.JAVA_BYTE, wo + 2 + j) & 0xFF;
                                    sum += (long) ((packed & 0x0F) - 8) * xq.get(ValueLayout.JAVA_BYTE, xo + 2 + j);
                                    sum += (long) ((packed >>> 4) - 8) * xq.get(ValueLayout.JAVA_BYTE, xo + 18 + j);
                                }
                                double scale = (double) Simd.fp16(w, wo) * Simd.fp16(xq, xo);
                                dot += scale * sum;
                                mag += Math.abs(scale * sum);
                            }
                            assertEquals(dot, out[t * stride + 2 + row], 1e-6 * mag + 1e-30,
                                    "threads " + threads + " n " + n + " token " + t + " row " + row);
                        }
                    }
                }
            }
        }
    }
}
