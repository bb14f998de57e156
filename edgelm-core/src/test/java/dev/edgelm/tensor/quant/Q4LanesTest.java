package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.Parallel;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Q4_0 decode ({@link Q4Lanes}, the default one-token and batched-decode path): against a reference written here
 * from ggml's definitions, the weights decoded from the bytes ({@code (nibble - 8) * d}), the activation rounded to
 * int8 per block of 32 by ggml's Q8_0 rule ({@code d = amax / 127}, round to nearest even, {@code d} at fp16
 * precision) and each block's integer sum taken exactly; on odd shapes (1, 8, 33, 112 blocks: groups padded), on
 * one and two threads, with extreme blocks whose 16-bit sums of {@code q * x} wrap; and against float activations
 * within the bound that the rounding allows.
 */
class Q4LanesTest {
    private static byte[] randomBlocks(int rows, int cols, Random r) {
        byte[] bytes = new byte[rows * cols / 32 * 18];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += 18) {
            Blocks.half(bytes, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.01)));
        }
        return bytes;
    }

    private static int nibble(byte[] bytes, int o, int j) {
        return j < 16 ? bytes[o + 2 + j] & 0x0F : (bytes[o + 2 + j - 16] & 0xFF) >> 4;
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
                float v = x[off + b * 32 + j] * id;
                q[b * 32 + j] = (int) Math.rint(v);
            }
        }
        return q;
    }

    /** {@code [value, magnitude]} of row {@code row} times x rounded to int8, the block sums exact. */
    private static double[] reference(byte[] bytes, int row, int cols, float[] x, int off) {
        double[] dx = new double[cols / 32];
        int[] xq = roundInt8(x, off, cols, dx);
        double sum = 0;
        double mag = 0;
        int o = row * cols / 32 * 18;
        for (int b = 0; b < cols / 32; b++, o += 18) {
            long isum = 0;
            for (int j = 0; j < 32; j++) {
                isum += (long) (nibble(bytes, o, j) - 8) * xq[b * 32 + j];
            }
            double dw = Blocks.half((bytes[o] & 0xFF) | (bytes[o + 1] & 0xFF) << 8);
            sum += dw * dx[b] * isum;
            mag += Math.abs(dw * dx[b] * isum);
        }
        return new double[] {sum, mag};
    }

    @Test
    void decodeMatchesInt8Reference() {
        Random r = new Random(18);
        int rows = 45;
        for (int blocks : new int[] {1, 8, 16, 17, 32, 33, 50, 80, 112}) {
            int cols = blocks * 32;
            byte[] bytes = randomBlocks(rows, cols, r);
            for (int threads : new int[] {1, 2}) {
                Q4_0Matrix m = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
                try (Parallel pool = new Parallel(threads)) {
                    float[] x = new float[cols];
                    for (int i = 0; i < cols; i++) {
                        x[i] = (float) (r.nextGaussian() * (i % 7 == 0 ? 5 : 1));
                    }
                    float[] out = new float[rows];
                    m.matmul(pool, x, 1, out);
                    for (int row = 0; row < rows; row++) {
                        double[] ref = reference(bytes, row, cols, x, 0);
                        String where = "blocks " + blocks + " threads " + threads + " row " + row;
                        // float accumulation of the block terms (and the two scale products) only
                        assertEquals(ref[0], out[row], 2e-6 * ref[1] + 1e-30, where);
                        assertEquals(Float.floatToRawIntBits(out[row]), Float.floatToRawIntBits(m.dotRow(row, x, 0)), where + " (dotRow)");
                    }
                }
            }
        }
    }

    @Test
    void wrappingSixteenBitSumsAreExact() {
        // block 0 all nibbles 15 against x = +1 (xq = 127): sum(q x) = 60,960 wraps in 16 bits, sum((q-8) x) = 28,448;
        // block 1 all nibbles 0: -32,512; block 2 alternating 15 and 0 against alternating signs: 32 * 127 * 7.5
        int cols = 3 * 32;
        byte[] bytes = new byte[3 * 18];
        float[] x = new float[cols];
        for (int b = 0; b < 3; b++) {
            Blocks.half(bytes, b * 18, Float.floatToFloat16(1f));
            for (int j = 0; j < 16; j++) {
                bytes[b * 18 + 2 + j] = (byte) (b == 0 ? 0xFF : b == 1 ? 0x00 : (j % 2 == 0 ? 0xFF : 0x00));
            }
        }
        for (int i = 0; i < cols; i++) {
            x[i] = i < 64 ? 1f : (i % 2 == 0 ? 1f : -1f);
        }
        Q4_0Matrix m = new Q4_0Matrix(Blocks.segment(bytes), 1, cols);
        float[] out = new float[1];
        try (Parallel pool = new Parallel(1)) {
            m.matmul(pool, x, 1, out);
        }
        double dx = Blocks.half(Float.floatToFloat16(1f / 127f));
        // hand-derived: 127 * (7 * 32 - 8 * 32 + (7 * 16 + 8 * 16)) = 127 * 208
        double expected = dx * 127 * (7 * 32 - 8 * 32 + 7 * 16 + 8 * 16);
        assertEquals(expected, out[0], 1e-5 * Math.abs(expected));
    }

    @Test
    void withinTheRoundingBoundOfFloatActivations() {
        Random r = new Random(5);
        int rows = 20;
        int cols = 112 * 32;
        byte[] bytes = randomBlocks(rows, cols, r);
        Q4_0Matrix m = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) r.nextGaussian();
        }
        float[] out = new float[rows];
        try (Parallel pool = new Parallel(2)) {
            m.matmul(pool, x, 1, out);
        }
        for (int row = 0; row < rows; row++) {
            double exact = 0;
            double bound = 0;
            int o = row * cols / 32 * 18;
            for (int b = 0; b < cols / 32; b++, o += 18) {
                double amax = 0;
                for (int j = 0; j < 32; j++) {
                    amax = Math.max(amax, Math.abs(x[b * 32 + j]));
                }
                double d = amax / 127;
                double dw = Blocks.half((bytes[o] & 0xFF) | (bytes[o + 1] & 0xFF) << 8);
                for (int j = 0; j < 32; j++) {
                    double w = (nibble(bytes, o, j) - 8) * dw;
                    exact += w * x[b * 32 + j];
                    // |x - dx * xq| <= d / 2 (rounding) + 127 * |d - dx| (the scale at fp16: |d - dx| <= d * 2^-11)
                    bound += Math.abs(w) * d * (0.5 + 127 * Math.scalb(1.0, -11)) + 1e-6 * Math.abs(w * x[b * 32 + j]);
                }
            }
            assertTrue(Math.abs(out[row] - exact) <= bound, "row " + row + ": " + out[row] + " vs " + exact + " bound " + bound);
        }
    }

    @Test
    void independentTokensAreTheirOneTokenProductsBitForBit() {
        Random r = new Random(3);
        int rows = 37;
        int cols = 33 * 32;
        byte[] bytes = randomBlocks(rows, cols, r);
        Q4_0Matrix m = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {2, 3, 5, 8, 17}) {
                    float[] x = new float[n * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) r.nextGaussian();
                    }
                    int stride = rows + 2;
                    float[] out = new float[n * stride];
                    m.matmul(pool, new Activations().set(x, n, cols).eachToken(true), out, stride, 1);
                    for (int t = 0; t < n; t++) {
                        float[] one = new float[rows];
                        m.matmul(pool, java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols), 1, one);
                        for (int row = 0; row < rows; row++) {
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(out[t * stride + 1 + row]),
                                    "threads " + threads + " n " + n + " token " + t + " row " + row);
                        }
                    }
                }
            }
        }
    }

    /** Q4_K rows from logical values: per super-block fp16 d and dmin, 6-bit sc and mn, nibbles; and those values. */
    private record Q4K(byte[] bytes, double[][] w) {
        static Q4K random(int rows, int cols, Random r) {
            byte[] bytes = new byte[rows * cols / 256 * 144];
            double[][] w = new double[rows][cols];
            for (int row = 0; row < rows; row++) {
                for (int sb = 0; sb < cols / 256; sb++) {
                    int d = Float.floatToFloat16((float) (r.nextDouble() * 0.002));
                    int dmin = Float.floatToFloat16((float) (r.nextDouble() * 0.002));
                    int[] sc = new int[8];
                    int[] mn = new int[8];
                    int[] q = new int[256];
                    for (int j = 0; j < 8; j++) {
                        sc[j] = r.nextInt(64);
                        mn[j] = r.nextInt(64);
                    }
                    for (int i = 0; i < 256; i++) {
                        q[i] = r.nextInt(16);
                        w[row][sb * 256 + i] = Blocks.half(d) * sc[i / 32] * q[i] - Blocks.half(dmin) * mn[i / 32];
                    }
                    Blocks.q4_K(bytes, (row * cols / 256 + sb) * 144, d, dmin, sc, mn, q);
                }
            }
            return new Q4K(bytes, w);
        }
    }

    @Test
    void q4KDecodeMatchesInt8Reference() {
        Random r = new Random(44);
        int rows = 29;
        for (int superBlocks : new int[] {1, 2, 3, 4, 10, 14}) {
            int cols = superBlocks * 256;
            Q4K m4 = Q4K.random(rows, cols, r);
            Q4_KMatrix m = new Q4_KMatrix(Blocks.segment(m4.bytes()), rows, cols);
            for (int threads : new int[] {1, 2}) {
                try (Parallel pool = new Parallel(threads)) {
                    float[] x = new float[cols];
                    for (int i = 0; i < cols; i++) {
                        x[i] = (float) (r.nextGaussian() * (i % 5 == 0 ? 4 : 1));
                    }
                    float[] out = new float[rows];
                    m.matmul(pool, x, 1, out);
                    double[] dx = new double[cols / 32];
                    int[] xq = roundInt8(x, 0, cols, dx);
                    for (int row = 0; row < rows; row++) {
                        double ref = 0;
                        double mag = 0;
                        double exact = 0;
                        double bound = 0;
                        for (int i = 0; i < cols; i++) {
                            double term = m4.w()[row][i] * dx[i / 32] * xq[i];
                            ref += term;
                            mag += Math.abs(term);
                            exact += m4.w()[row][i] * x[i];
                            bound += Math.abs(m4.w()[row][i]) * dx[i / 32] * 0.57;
                        }
                        String where = "super-blocks " + superBlocks + " threads " + threads + " row " + row;
                        // the block terms and the scale products in float (the bias 8 d sc - dmin m rounded once)
                        assertEquals(ref, out[row], 1e-5 * mag + 1e-30, where);
                        assertTrue(Math.abs(out[row] - exact) <= bound + 1e-5 * mag, where + " (float activations)");
                        assertEquals(Float.floatToRawIntBits(out[row]), Float.floatToRawIntBits(m.dotRow(row, x, 0)), where + " (dotRow)");
                    }
                    int n = 5;
                    float[] xs = new float[n * cols];
                    for (int i = 0; i < xs.length; i++) {
                        xs[i] = (float) r.nextGaussian();
                    }
                    float[] each = new float[n * rows];
                    m.matmul(pool, new Activations().set(xs, n, cols).eachToken(true), each, rows, 0);
                    for (int t = 0; t < n; t++) {
                        float[] one = new float[rows];
                        m.matmul(pool, java.util.Arrays.copyOfRange(xs, t * cols, (t + 1) * cols), 1, one);
                        for (int row = 0; row < rows; row++) {
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(each[t * rows + row]),
                                    where(superBlocks, threads, t, row));
                        }
                    }
                }
            }
        }
    }

    /**
     * The kernel of the products ({@code dotRows}: no masks, the differenced activation) gives the bits of the masked
     * {@code dot} on both formats: random rows, rows of all-15 and all-0 nibbles against activations of +-127
     * (the 16-bit sums wrap), padded and half-width last groups; and every activation is differenced as documented.
     */
    @Test
    void kernelWithoutMasksGivesTheMaskedBits() {
        Random r = new Random(77);
        int rows = 11;
        for (int superBlocks : new int[] {1, 2, 3, 4, 7, 14}) {
            int cols = superBlocks * 256;
            byte[] q40 = randomBlocks(rows, cols, r);
            byte[] q4k = Q4K.random(rows, cols, r).bytes();
            // rows 0 and 1 extreme: every nibble 15, every nibble 0 (Q4_0: bytes after the scale; Q4_K: the 128 qs bytes)
            for (int row = 0; row < 2; row++) {
                byte fill = (byte) (row == 0 ? 0xFF : 0x00);
                for (int b = 0; b < cols / 32; b++) {
                    java.util.Arrays.fill(q40, (row * cols / 32 + b) * 18 + 2, (row * cols / 32 + b) * 18 + 18, fill);
                }
                for (int sb = 0; sb < superBlocks; sb++) {
                    int o = (row * superBlocks + sb) * 144;
                    java.util.Arrays.fill(q4k, o + 16, o + 144, fill);
                }
            }
            for (Q4Lanes.Format format : Q4Lanes.Format.values()) {
                byte[] bytes = format == Q4Lanes.Format.Q4_0 ? q40 : q4k;
                Q4Lanes l = Q4Lanes.of(format, Blocks.segment(bytes), rows, cols, null);
                for (int pattern = 0; pattern < 3; pattern++) {
                    float[] x = new float[cols];
                    for (int i = 0; i < cols; i++) {
                        x[i] = pattern == 0 ? (float) r.nextGaussian() : pattern == 1 ? 1f : (i % 2 == 0 ? 1f : -1f);
                    }
                    Q4Lanes.Input in = Q4Lanes.Input.allocate(cols).round(x, 0, cols);
                    checkDifferenced(in, cols);
                    float[] unmasked = new float[rows + 3];
                    l.dotRows(0, rows, in, unmasked, 3);
                    for (int row = 0; row < rows; row++) {
                        String where = format + " cols " + cols + " pattern " + pattern + " row " + row;
                        int dot = Float.floatToRawIntBits(l.dot(row, in));
                        assertEquals(dot, Float.floatToRawIntBits(unmasked[3 + row]), where + " (unmasked)");
                    }
                }
            }
        }
    }

    /**
     * Q4_0 rows of odd block counts (1, 3, 17, 33 blocks: a lone half-width group, padding slots) through the kernel
     * without masks: the bits of the masked {@code dot}, extreme nibbles and activations included.
     */
    @Test
    void kernelWithoutMasksOnOddBlockCounts() {
        Random r = new Random(78);
        int rows = 5;
        for (int cols : new int[] {32, 96, 544, 1056}) {
            byte[] q40 = randomBlocks(rows, cols, r);
            for (int row = 0; row < 2; row++) {
                byte fill = (byte) (row == 0 ? 0xFF : 0x00);
                for (int b = 0; b < cols / 32; b++) {
                    java.util.Arrays.fill(q40, (row * cols / 32 + b) * 18 + 2, (row * cols / 32 + b) * 18 + 18, fill);
                }
            }
            Q4Lanes l = Q4Lanes.of(Q4Lanes.Format.Q4_0, Blocks.segment(q40), rows, cols, null);
            for (int pattern = 0; pattern < 3; pattern++) {
                float[] x = new float[cols];
                for (int i = 0; i < cols; i++) {
                    x[i] = pattern == 0 ? (float) r.nextGaussian() : pattern == 1 ? 1f : (i % 2 == 0 ? 1f : -1f);
                }
                Q4Lanes.Input in = Q4Lanes.Input.allocate(cols).round(x, 0, cols);
                checkDifferenced(in, cols);
                float[] unmasked = new float[rows];
                l.dotRows(0, rows, in, unmasked, 0);
                for (int row = 0; row < rows; row++) {
                    assertEquals(Float.floatToRawIntBits(l.dot(row, in)), Float.floatToRawIntBits(unmasked[row]),
                            "cols " + cols + " pattern " + pattern + " row " + row);
                }
            }
        }
    }

    /** {@code y}: element 4k' of each block as in x, element 4k'+i (i = 1..3) x's minus 16 times the one before. */
    private static void checkDifferenced(Q4Lanes.Input in, int cols) {
        int blocks = cols / 32;
        for (int b = 0; b < Q4Lanes.slots(cols); b++) {
            int w = b / Q4Lanes.G < Q4Lanes.fullGroups(cols) ? Q4Lanes.G : Q4Lanes.H;
            int base = (b / Q4Lanes.G) * 32 * Q4Lanes.G + b % Q4Lanes.G;
            for (int k = 0; k < 32; k++) {
                int xk = in.x()[base + k * w];
                int expected = k % 4 == 0 ? xk : xk - 16 * in.x()[base + (k - 1) * w];
                assertEquals((short) expected, in.y()[base + k * w], "block " + b + " element " + k);
                if (b >= blocks) {
                    assertEquals(0, xk, "padding block " + b);
                }
            }
        }
    }

    private static String where(int superBlocks, int threads, int token, int row) {
        return "super-blocks " + superBlocks + " threads " + threads + " token " + token + " row " + row + " (batched)";
    }

    @Test
    void inAFusedSectionTheCopyAndTheRoundedInputsAreTheProductsOwn() {
        // two fresh matrices of different widths in one fused section (as decode runs a layer's projections): the
        // first product makes its copy and both round their inputs while the sections are only recorded
        Random r = new Random(11);
        int rows = 300;
        byte[] a = randomBlocks(rows, 1024, r);
        byte[] b = randomBlocks(rows, 3584, r);
        float[] xa = new float[1024];
        float[] xb = new float[3584];
        for (int i = 0; i < xb.length; i++) {
            xb[i] = (float) r.nextGaussian();
            xa[i % 1024] = (float) r.nextGaussian();
        }
        float[] fa = new float[rows];
        float[] fb = new float[rows];
        float[] sa = new float[rows];
        float[] sb = new float[rows];
        try (Parallel pool = new Parallel(2)) {
            Q4_0Matrix ma = new Q4_0Matrix(Blocks.segment(a), rows, 1024);
            Q4_0Matrix mb = new Q4_0Matrix(Blocks.segment(b), rows, 3584);
            pool.fused(() -> {
                ma.matmul(pool, xa, 1, fa);
                mb.matmul(pool, xb, 1, fb);
            });
            ma.matmul(pool, xa, 1, sa);
            mb.matmul(pool, xb, 1, sb);
        }
        for (int row = 0; row < rows; row++) {
            assertEquals(Float.floatToRawIntBits(sa[row]), Float.floatToRawIntBits(fa[row]), "1024 wide, row " + row);
            assertEquals(Float.floatToRawIntBits(sb[row]), Float.floatToRawIntBits(fb[row]), "3584 wide, row " + row);
            assertEquals(reference(a, row, 1024, xa, 0)[0], fa[row], 2e-6 * reference(a, row, 1024, xa, 0)[1], "row " + row);
        }
    }
}
