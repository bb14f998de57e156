package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.Parallel;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Q5_K decode on the integer copy ({@link Q5_KLanes}, the one-token and batched-decode path on 16 float lanes) against
 * a reference written here from ggml's definitions: super-blocks written by {@link Blocks#q5_K} from integer values,
 * scales and mins drawn here; the activation rounded to int8 per block of 32 by ggml's Q8_0 rule ({@code d = amax /
 * 127}, round to nearest even, {@code d} at fp16 precision); per sub-block {@code (d sc) dx sum(q xq) - (dmin m) dx
 * sum(xq)} with the integer sums exact, in double. Odd shapes (1, 4, 5, 7, 14 super-blocks: half-width and padded
 * groups), one and two threads, independent tokens, and sums that wrap in 16 bits.
 */
class Q5_KLanesTest {
    private record Built(byte[] bytes, int[][] q, double[][] a, double[][] c) {}

    private static Built build(int rows, int cols, Random r, int fixedQ) {
        int sbs = cols / 256;
        byte[] bytes = new byte[rows * sbs * 176];
        int[][] qs = new int[rows][cols];
        double[][] a = new double[rows][cols / 32];
        double[][] c = new double[rows][cols / 32];
        for (int row = 0; row < rows; row++) {
            for (int b = 0; b < sbs; b++) {
                int d = Float.floatToFloat16((float) (0.001 + 0.01 * r.nextDouble()));
                int dmin = Float.floatToFloat16((float) (0.02 * r.nextDouble()));
                int[] sc = new int[8];
                int[] mn = new int[8];
                int[] q = new int[256];
                for (int j = 0; j < 8; j++) {
                    sc[j] = r.nextInt(64);
                    mn[j] = r.nextInt(64);
                }
                for (int i = 0; i < 256; i++) {
                    q[i] = fixedQ >= 0 ? fixedQ : r.nextInt(32);
                    qs[row][256 * b + i] = q[i];
                }
                Blocks.q5_K(bytes, (row * sbs + b) * 176, d, dmin, sc, mn, q);
                for (int j = 0; j < 8; j++) {
                    // the kernel's scale and offset are float products of the fp16 values and the 6-bit integers
                    a[row][8 * b + j] = (float) Blocks.half(d) * sc[j];
                    c[row][8 * b + j] = (float) Blocks.half(dmin) * mn[j];
                }
            }
        }
        return new Built(bytes, qs, a, c);
    }

    /** ggml's quantize_row_q8_0 on x86: per block the fp16 scale and the int8 values. */
    private static int[] roundInt8(float[] x, int off, int cols, double[] scales) {
        int[] q = new int[cols];
        for (int b = 0; b < cols / 32; b++) {
            float amax = 0f;
            for (int j = 0; j < 32; j++) {
                amax = Math.max(amax, Math.abs(x[off + b * 32 + j]));
            }
            float d = amax / 127f;
            float id = d != 0f ? 1f / d : 0f;
            scales[b] = Blocks.half(Float.floatToFloat16(d));
            for (int j = 0; j < 32; j++) {
                q[b * 32 + j] = (int) Math.rint(x[off + b * 32 + j] * id);
            }
        }
        return q;
    }

    /** {@code [value, magnitude]} of row {@code row} times x (from {@code off}) rounded to int8, block sums exact. */
    private static double[] reference(Built w, int row, int cols, float[] x, int off) {
        double[] dx = new double[cols / 32];
        int[] xq = roundInt8(x, off, cols, dx);
        double sum = 0;
        double mag = 0;
        for (int b = 0; b < cols / 32; b++) {
            long qx = 0;
            long sx = 0;
            for (int k = 0; k < 32; k++) {
                qx += (long) w.q()[row][32 * b + k] * xq[32 * b + k];
                sx += xq[32 * b + k];
            }
            double v = w.a()[row][b] * dx[b] * qx - w.c()[row][b] * dx[b] * sx;
            sum += v;
            mag += Math.abs(w.a()[row][b] * dx[b] * qx) + Math.abs(w.c()[row][b] * dx[b] * sx);
        }
        return new double[] {sum, mag};
    }

    @Test
    void decodeMatchesInt8Reference() {
        Random r = new Random(55);
        int rows = 23;
        for (int sbs : new int[] {1, 4, 5, 7, 14}) {
            int cols = sbs * 256;
            Built w = build(rows, cols, r, -1);
            // the kernel itself (the matrix takes it with -Dedgelm.q5k.intdecode=true on 16 float lanes)
            Q5_KLanes.Decode m = new Q5_KLanes.Decode(Blocks.segment(w.bytes()), rows, cols);
            for (int threads : new int[] {1, 2}) {
                try (Parallel pool = new Parallel(threads)) {
                    int n = 3;
                    float[] x = new float[n * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) (r.nextGaussian() * (i % 7 == 0 ? 5 : 1));
                    }
                    float[] one = new float[rows];
                    float[] each = new float[n * rows];
                    m.multiply(pool, new Activations().set(x, n, cols), each, rows, 0);
                    for (int t = 0; t < n; t++) {
                        float[] xt = java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols);
                        m.multiply(pool, new Activations().set(xt, 1, cols), one, rows, 0);
                        for (int row = 0; row < rows; row++) {
                            double[] ref = reference(w, row, cols, x, t * cols);
                            String where = "super-blocks " + sbs + " threads " + threads + " token " + t + " row " + row;
                            // float accumulation of the sub-block terms (and the scale products) only
                            assertEquals(ref[0], one[row], 2e-6 * ref[1] + 1e-30, where);
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(each[t * rows + row]), where + " (each token)");
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(m.dotRow(row, x, t * cols)), where + " (dotRow)");
                        }
                    }
                }
            }
        }
    }

    @Test
    void wrappingSixteenBitSumsAreExact() {
        // every q = 31 (and then every q = 0) against x = +1 (xq = 127 in every block): a half's sum(q xq) = 62,992
        // wraps in 16 bits; sum((q - 16) xq) per half is +30,480 (q = 31) and -32,512 (q = 0, the limit)
        for (int q : new int[] {31, 0}) {
            int cols = 512;
            Built w = build(2, cols, new Random(q), q);
            Q5_KLanes.Decode m = new Q5_KLanes.Decode(Blocks.segment(w.bytes()), 2, cols);
            float[] x = new float[cols];
            java.util.Arrays.fill(x, 1f);
            float[] out = new float[2];
            try (Parallel pool = new Parallel(1)) {
                m.multiply(pool, new Activations().set(x, 1, cols), out, 2, 0);
            }
            double dx = Blocks.half(Float.floatToFloat16(1f / 127f));
            for (int row = 0; row < 2; row++) {
                // hand-derived: per sub-block a dx (32 q 127) - c dx (32 * 127)
                double expected = 0;
                for (int b = 0; b < cols / 32; b++) {
                    expected += w.a()[row][b] * dx * 32 * q * 127 - w.c()[row][b] * dx * 32 * 127;
                }
                assertEquals(expected, out[row], 1e-5 * Math.abs(expected) + 1e-6, "q " + q + " row " + row);
            }
        }
    }
}
