package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Q4_K prefill with int8 activations against an independent computation: the weights dequantised here from the
 * block bytes by ggml's definition ({@code dequantize_row_q4_K}, with its {@code get_scale_min_k4} written out),
 * each token's activations quantised per block of 32 as ggml's x86 Q8_0 quantiser does ({@code d = amax / 127}
 * stored at fp16, values {@code x / d} rounded to nearest with ties to even: {@code _mm256_round_ps}; the reference
 * quantiser in C rounds ties away from zero, which moves a value by one at an exact tie), each block summed in
 * double and scaled by the fp16 scale.
 */
class Q4_KInt8GemmTest {
    private static final int BLOCK_BYTES = 144;

    /** Row {@code row}'s values by ggml's Q4_K definition. */
    static double[] dequantize(MemorySegment w, int row, int cols) {
        double[] y = new double[cols];
        long o = row * (long) (cols / 256) * BLOCK_BYTES;
        for (int sb = 0; sb < cols / 256; sb++, o += BLOCK_BYTES) {
            double d = Simd.fp16(w, o);
            double dmin = Simd.fp16(w, o + 2);
            int[] q = new int[12];
            for (int i = 0; i < 12; i++) {
                q[i] = w.get(ValueLayout.JAVA_BYTE, o + 4 + i) & 0xFF;
            }
            for (int g = 0; g < 4; g++) {
                for (int half = 0; half < 2; half++) {
                    int j = 2 * g + half;
                    int sc = j < 4 ? q[j] & 63 : (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
                    int m = j < 4 ? q[j + 4] & 63 : (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
                    for (int l = 0; l < 32; l++) {
                        int packed = w.get(ValueLayout.JAVA_BYTE, o + 16 + 32 * g + l) & 0xFF;
                        int nibble = half == 0 ? packed & 0x0F : packed >> 4;
                        y[sb * 256 + 64 * g + 32 * half + l] = d * sc * nibble - dmin * m;
                    }
                }
            }
        }
        return y;
    }

    @Test
    void matchesQ4_KTimesGgmlQ8_0Activations() {
        // the integer tiles Q4_K takes with -Dedgelm.q4k.int8gemm=true, called directly: Q4_0Gemm's on 16-lane
        // vectors, Int8Gemm on 8 lanes
        boolean wide = Q4_0Gemm.ENABLED;
        assumeTrue(wide || Int8Gemm.ENABLED, "no int8-activation kernel at this vector width");
        Random r = new Random(11);
        int rows = 43; // not a multiple of the 4-row tile
        int cols = 3 * 256;
        byte[] bytes = new byte[rows * (cols / 256) * BLOCK_BYTES];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += BLOCK_BYTES) {
            Blocks.half(bytes, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.01)));
            Blocks.half(bytes, o + 2, Float.floatToFloat16((float) Math.abs(r.nextGaussian() * 0.01)));
        }
        MemorySegment w = Blocks.segment(bytes);
        Q4_KMatrix m = new Q4_KMatrix(w, rows, cols);
        double[][] ref = new double[rows][];
        for (int row = 0; row < rows; row++) {
            ref[row] = dequantize(w, row, cols);
        }
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {16, 37, 64, 70}) {
                    float[] x = new float[n * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) (r.nextGaussian() * (1 + i % 5));
                    }
                    int[] xq = new int[x.length];
                    double[] xd = new double[x.length / 32];
                    for (int b = 0; b < xd.length; b++) {
                        float amax = 0f;
                        for (int j = 0; j < 32; j++) {
                            amax = Math.max(amax, Math.abs(x[b * 32 + j]));
                        }
                        float d = amax / 127;
                        float id = d != 0f ? 1f / d : 0f;
                        xd[b] = Float.float16ToFloat(Float.floatToFloat16(d));
                        for (int j = 0; j < 32; j++) {
                            xq[b * 32 + j] = (int) Math.rint(x[b * 32 + j] * id);
                        }
                    }
                    int stride = rows + 3;
                    float[] out = new float[n * stride];
                    if (wide) {
                        Q4_0Gemm.matmul(m, pool, new Activations().set(x, n, cols), out, stride, 2);
                    } else {
                        Int8Gemm.matmul(m, pool, new Activations().set(x, n, cols), out, stride, 2);
                    }
                    for (int t = 0; t < n; t++) {
                        for (int row = 0; row < rows; row++) {
                            double dot = 0;
                            double mag = 0;
                            for (int b = 0; b < cols / 32; b++) {
                                int xb = t * (cols / 32) + b;
                                double sum = 0;
                                for (int j = 0; j < 32; j++) {
                                    sum += ref[row][b * 32 + j] * xq[xb * 32 + j];
                                }
                                double scaled = sum * xd[xb];
                                dot += scaled;
                                mag += Math.abs(scaled);
                            }
                            assertEquals(dot, out[t * stride + 2 + row], 2e-6 * mag + 1e-30,
                                    "threads " + threads + " n " + n + " token " + t + " row " + row);
                        }
                    }
                }
            }
        }
    }
}
