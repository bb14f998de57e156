package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The Q6_K integer kernel ({@link Q6_KLanes}) against the format's definition: super-blocks written by
 * {@link Blocks} from integers drawn here, the activations rounded to int8 by ggml's Q8_K rule as written out
 * here (not by the code under test), and the product summed in double from those integers. Rows of 1..4
 * super-blocks (a tail super-block alone, one pair, a pair and a tail), on one and two threads; with 16 float
 * lanes also through {@link Q6_KMatrix} (one token, independent tokens and {@code dotRow}, bit for bit), and
 * against the float activations within the bound that the rounding allows.
 */
class Q6_KLanesTest {
    private record Built(byte[] bytes, int[][] q, int[][] sc, double[][] d) {}

    private static Built build(int rows, int cols, Random r, boolean extreme) {
        int blocks = cols / 256;
        byte[] bytes = new byte[(int) (rows * GgmlType.Q6_K.byteSize(cols))];
        int[][] q = new int[rows][cols];
        int[][] sc = new int[rows][cols / 16];
        double[][] d = new double[rows][blocks];
        for (int row = 0; row < rows; row++) {
            for (int b = 0; b < blocks; b++) {
                int dh = Float.floatToFloat16((float) (0.001 + 0.01 * r.nextDouble()));
                int[] s = new int[16];
                int[] v = new int[256];
                for (int j = 0; j < 16; j++) {
                    s[j] = extreme ? -128 : r.nextInt(256) - 128;
                    sc[row][16 * b + j] = s[j];
                }
                for (int i = 0; i < 256; i++) {
                    v[i] = extreme ? -32 : r.nextInt(64) - 32;
                    q[row][256 * b + i] = v[i];
                }
                Blocks.q6_K(bytes, (row * blocks + b) * GgmlType.Q6_K.typeSize(), dh, s, v);
                d[row][b] = Blocks.half(dh);
            }
        }
        return new Built(bytes, q, sc, d);
    }

    /** ggml's quantize_row_q8_K: per 256 the value of largest magnitude (the first), iscale = -127 / it. */
    private static float[] q8K(float[] x, int[] xq) {
        float[] dx = new float[x.length / 256];
        for (int b = 0; b < dx.length; b++) {
            float max = 0;
            float amax = 0;
            for (int j = 0; j < 256; j++) {
                if (Math.abs(x[256 * b + j]) > amax) {
                    amax = Math.abs(x[256 * b + j]);
                    max = x[256 * b + j];
                }
            }
            if (amax == 0) {
                continue;
            }
            float iscale = -127f / max;
            for (int j = 0; j < 256; j++) {
                // ties to even, as ggml's nearest_int (the product in float, as there)
                xq[256 * b + j] = Math.min(127, (int) Math.rint(iscale * x[256 * b + j]));
            }
            dx[b] = 1 / iscale;
        }
        return dx;
    }

    /** Row {@code row} times the rounded activations, in double, and the sum of the terms' magnitudes. */
    private static double[] reference(Built w, int row, int[] xq, float[] dx) {
        double dot = 0;
        double mag = 0;
        for (int b = 0; b < dx.length; b++) {
            for (int g = 0; g < 16; g++) {
                long s = 0;
                for (int k = 0; k < 16; k++) {
                    int i = 256 * b + 16 * g + k;
                    s += (long) w.q()[row][i] * xq[i];
                }
                double term = (double) dx[b] * w.d()[row][b] * w.sc()[row][16 * b + g] * s;
                dot += term;
                mag += Math.abs(term);
            }
        }
        return new double[] {dot, mag};
    }

    private static float[] gaussian(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    @Test
    void kernelMatchesTheDefinitionWithInt8Activations() {
        assumeTrue(Simd.L >= 8, "the kernel's shapes are 256 and 512 bits");
        Random r = new Random(61);
        int rows = 131; // rows * cols >= Parallel.MIN_PARALLEL_COST: two threads really split the repack
        for (int blocks : new int[] {1, 2, 3, 4, 7}) {
            int cols = 256 * blocks;
            for (boolean extreme : new boolean[] {false, true}) {
                Built w = build(rows, cols, r, extreme);
                MemorySegment file = Blocks.segment(w.bytes());
                for (int threads : new int[] {1, 2}) {
                    try (Parallel pool = new Parallel(threads)) {
                        MemorySegment lanes = Q6_KLanes.repack(file, rows, cols, Arena.ofAuto(), pool);
                        float[] x = gaussian(r, cols);
                        if (extreme) {
                            // every activation rounds to -127: each sub-block sums 16 products of (-32) * (-127)
                            java.util.Arrays.fill(x, -1.5f);
                        }
                        int[] xq = new int[cols];
                        float[] dx = q8K(x, xq);
                        short[] kq = new short[cols];
                        float[] kdx = new float[blocks];
                        Q6_KLanes.quantize(x, 0, cols, kq, 0, kdx, 0);
                        for (int row = 0; row < rows; row++) {
                            double[] ref = reference(w, row, xq, dx);
                            float got = Q6_KLanes.dot(lanes, row * Q6_KLanes.rowBytes(blocks), blocks, kq, 0, kdx, 0);
                            // integer sums exact; a float rounding per super-block scale and per sum step
                            assertEquals(ref[0], got, 1e-6 * ref[1] + 1e-30, "blocks " + blocks + " row " + row + " extreme " + extreme);
                        }
                    }
                }
            }
        }
    }

    @Test
    void activationsRoundAsGgmlsQ8K() {
        assumeTrue(Simd.L >= 8, "the kernel's shapes are 256 and 512 bits");
        Random r = new Random(5);
        float[] x = gaussian(r, 768);
        x[300] = 0.5f * x[300];
        java.util.Arrays.fill(x, 512, 768, 0f); // an all-zero block: scale 0, values 0
        x[100] = -9f; // the largest magnitude: it rounds to -127 whatever its sign (iscale = -127 / max)
        x[400] = 7f;
        int[] xq = new int[768];
        float[] dx = q8K(x, xq);
        short[] kq = new short[768];
        float[] kdx = new float[3];
        Q6_KLanes.quantize(x, 0, 768, kq, 0, kdx, 0);
        assertEquals(-127, xq[100]);
        assertEquals(-127, xq[400]);
        assertEquals(0f, dx[2]);
        for (int b = 0; b < 3; b++) {
            assertEquals(dx[b], kdx[b], "scale of block " + b);
            for (int j = 0; j < 256; j++) {
                int i = 256 * b + j;
                assertEquals(xq[i], kq[Q6_KLanes.lane(3, b, j / 16, j % 16)], "value " + i);
            }
        }
    }

    @Test
    void matrixProductsAreOneKernelAndStayNearTheFloatProduct() {
        assumeTrue(Q6_KMatrix.INT8, "8 lanes: the float kernels (KQuantDecodeKernelTest)");
        Random r = new Random(17);
        int rows = 131; // rows * cols >= Parallel.MIN_PARALLEL_COST: two threads really split the products
        for (int blocks : new int[] {1, 3, 4}) {
            int cols = 256 * blocks;
            Built w = build(rows, cols, r, false);
            assertTrue((long) rows * cols >= Parallel.MIN_PARALLEL_COST, "the products would run inline");
            Q6_KMatrix m = new Q6_KMatrix(Blocks.segment(w.bytes()), rows, cols);
            for (int threads : new int[] {1, 2}) {
                try (Parallel pool = new Parallel(threads)) {
                    int n = 3;
                    float[] x = gaussian(r, n * cols);
                    float[] each = new float[n * rows];
                    m.matmul(pool, new Activations().set(x, n, cols).eachToken(true), each, rows, 0);
                    for (int t = 0; t < n; t++) {
                        float[] xt = java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols);
                        float[] one = new float[rows];
                        m.matmul(pool, xt, 1, one);
                        int[] xq = new int[cols];
                        float[] dx = q8K(xt, xq);
                        for (int row = 0; row < rows; row++) {
                            String where = "blocks " + blocks + " threads " + threads + " token " + t + " row " + row;
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(each[t * rows + row]), where + " (each token)");
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(m.dotRow(row, x, t * cols)), where + " (dotRow)");
                            double[] ref = reference(w, row, xq, dx);
                            assertEquals(ref[0], one[row], 1e-6 * ref[1] + 1e-30, where + " (int8 definition)");
                            // against float activations: each rounded value is off by at most dx / 2
                            double exact = 0;
                            double bound = 0;
                            for (int i = 0; i < cols; i++) {
                                double wi = w.d()[row][i / 256] * w.sc()[row][i / 16] * w.q()[row][i];
                                exact += wi * xt[i];
                                bound += Math.abs(wi) * Math.abs(dx[i / 256]) / 2;
                            }
                            assertTrue(Math.abs(exact - one[row]) <= bound * 1.0001 + 1e-6 * ref[1],
                                    where + ": " + one[row] + " against " + exact + ", bound " + bound);
                        }
                    }
                }
            }
            assertEquals(rows * Q6_KLanes.rowBytes(blocks), m.laneBytes());
        }
    }
}
