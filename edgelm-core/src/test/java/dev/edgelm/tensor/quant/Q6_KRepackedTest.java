package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.Parallel;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The repacked Q6_K decode path ({@link Q6_KRepacked}) against the format's definition ({@code d * sc * (q - 32)}
 * in double, from the integers drawn here and written by {@link Blocks#q6_K}) and against the kernel that reads
 * the file's bytes: one-token products, independent tokens and {@code dotRow} must give the same bits whether
 * the matrix has been repacked or not. 8-lane (AVX2) machines only: elsewhere no copy is made.
 */
class Q6_KRepackedTest {
    private static final int ROWS = 37;

    @Test
    void repackedProductsEqualTheFileKernelBitForBitAndTheDefinition() {
        assumeTrue(Simd.K8, "the repacked copy is used by the 8-lane kernels only");
        Random r = new Random(606);
        for (int cols : new int[] {256, 768, 1024}) {
            int blocks = cols / 256;
            byte[] bytes = new byte[ROWS * blocks * Q6_KMatrix.BLOCK_BYTES];
            double[][] w = new double[ROWS][cols];
            for (int row = 0; row < ROWS; row++) {
                for (int b = 0; b < blocks; b++) {
                    int d = Float.floatToFloat16((float) (0.001 + 0.01 * r.nextDouble()));
                    int[] sc = new int[16];
                    int[] q = new int[256];
                    for (int j = 0; j < 16; j++) {
                        sc[j] = r.nextInt(256) - 128;
                    }
                    for (int i = 0; i < 256; i++) {
                        q[i] = r.nextInt(64) - 32;
                    }
                    Blocks.q6_K(bytes, (row * blocks + b) * Q6_KMatrix.BLOCK_BYTES, d, sc, q);
                    for (int i = 0; i < 256; i++) {
                        w[row][256 * b + i] = Blocks.half(d) * (double) sc[i / 16] * q[i];
                    }
                }
            }
            Q6_KMatrix file = new Q6_KMatrix(Blocks.segment(bytes), ROWS, cols);
            Q6_KMatrix packed = new Q6_KMatrix(Blocks.segment(bytes), ROWS, cols);
            for (int threads : new int[] {1, 2}) {
                try (Parallel pool = new Parallel(threads)) {
                    assertNotNull(packed.repack(pool));
                    assertEquals((long) ROWS * blocks * 320, packed.repack(pool).byteSize(), "1.25 bytes per weight");
                    for (int n = 1; n <= 5; n++) {
                        float[] x = new float[n * cols];
                        for (int i = 0; i < x.length; i++) {
                            x[i] = (float) r.nextGaussian();
                        }
                        int stride = ROWS + 1;
                        float[] each = new float[n * stride];
                        float[] eachFile = new float[n * stride];
                        packed.matmul(pool, new Activations().set(x, n, cols).eachToken(true), each, stride, 1);
                        file.matmul(pool, new Activations().set(x, n, cols).eachToken(true), eachFile, stride, 1);
                        for (int t = 0; t < n; t++) {
                            float[] xt = new float[cols];
                            System.arraycopy(x, t * cols, xt, 0, cols);
                            float[] one = new float[ROWS];
                            float[] oneFile = new float[ROWS];
                            packed.matmul(pool, xt, 1, one);
                            file.matmul(pool, xt, 1, oneFile);
                            for (int row = 0; row < ROWS; row++) {
                                String where = "cols " + cols + " threads " + threads + " n " + n + " token " + t + " row " + row;
                                double dot = 0;
                                double mag = 0;
                                for (int i = 0; i < cols; i++) {
                                    dot += w[row][i] * xt[i];
                                    mag += Math.abs(w[row][i] * xt[i]);
                                }
                                // float products and sums of cols terms: a few ulps of the magnitude
                                assertEquals(dot, one[row], 3e-6 * mag, where + " (repacked, against the definition)");
                                assertEquals(Float.floatToRawIntBits(oneFile[row]), Float.floatToRawIntBits(one[row]),
                                        where + " (repacked one-token against the file kernel)");
                                assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(each[t * stride + 1 + row]),
                                        where + " (repacked, each token)");
                                assertEquals(Float.floatToRawIntBits(eachFile[t * stride + 1 + row]),
                                        Float.floatToRawIntBits(each[t * stride + 1 + row]), where + " (each token, file kernel)");
                                assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(packed.dotRow(row, x, t * cols)),
                                        where + " (repacked dotRow)");
                            }
                        }
                    }
                }
            }
        }
    }
}
