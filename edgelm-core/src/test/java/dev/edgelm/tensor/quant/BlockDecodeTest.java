package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Every dequantiser against values derived from ggml's documented layouts: blocks are packed by the
 * test's own encoders ({@link Blocks}) from chosen quants and scales, and the expected floats follow the
 * format's formula, evaluated in the same float order as ggml's {@code dequantize_row_*}. Each row uses a
 * different fp16 super-scale, covering zero, negative zero, one, the largest finite half (both signs),
 * the smallest and largest subnormal halves and an inexact one (1/3).
 */
class BlockDecodeTest {
    private static final int[] SCALES = {0x0000, 0x8000, 0x3C00, 0x7BFF, 0xFBFF, 0x0001, 0x03FF, 0x3555, 0xC000};
    private static final int BLOCKS_PER_ROW = 2;

    private record Case(GgmlType type, byte[] bytes, float[] expected, int rows, int cols) {}

    private interface BlockWriter {
        /** Writes one block at {@code o} with super-scale bits {@code d}; fills expected[e .. e + blockSize). */
        void write(byte[] out, int o, int d, Random r, float[] expected, int e);
    }

    private static Case build(GgmlType type, BlockWriter w) {
        Random r = new Random(type.ordinal());
        int cols = BLOCKS_PER_ROW * type.blockSize();
        byte[] bytes = new byte[(int) (SCALES.length * type.byteSize(cols))];
        float[] expected = new float[SCALES.length * cols];
        int o = 0;
        int e = 0;
        for (int d : SCALES) {
            for (int b = 0; b < BLOCKS_PER_ROW; b++) {
                w.write(bytes, o, d, r, expected, e);
                o += type.typeSize();
                e += type.blockSize();
            }
        }
        return new Case(type, bytes, expected, SCALES.length, cols);
    }

    /** Random values in [lo, hi], with lo and hi themselves forced at positions 0 and n-1. */
    private static int[] values(Random r, int n, int lo, int hi) {
        int[] v = new int[n];
        for (int i = 0; i < n; i++) {
            v[i] = lo + r.nextInt(hi - lo + 1);
        }
        v[0] = lo;
        v[n - 1] = hi;
        return v;
    }

    private static void check(Case c) {
        WeightMatrix m = GgmlMatrices.create(c.type, Blocks.segment(c.bytes), c.rows, c.cols, "tensor test");
        assertEquals(c.type.name(), m.typeName());
        Random r = new Random(99);
        float[] x = new float[c.cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian();
        }
        for (int row = 0; row < c.rows; row++) {
            float[] got = new float[c.cols + 3];
            m.decodeRow(row, got, 3);
            float[] want = new float[c.cols + 3];
            System.arraycopy(c.expected, row * c.cols, want, 3, c.cols);
            assertArrayEquals(want, got, c.type + " row " + row + " (scale 0x" + Integer.toHexString(SCALES[row]) + ")");
            double dot = 0;
            double mag = 0;
            for (int i = 0; i < c.cols; i++) {
                dot += (double) want[3 + i] * x[i];
                mag += Math.abs((double) want[3 + i] * x[i]);
            }
            if (!(c.type == GgmlType.Q6_K && Q6_KMatrix.INT8
                    || c.type == GgmlType.Q4_0 && Q4_0Matrix.INT_DECODE || c.type == GgmlType.Q4_K && Q4_KMatrix.INT_DECODE
                    || c.type == GgmlType.Q5_K && Q5_KMatrix.INT_DECODE)) {
                // (Q4_0, Q4_K, Q5_K and Q6_K decode on int8 activations: against ggml's arithmetic in Q4LanesTest,
                // Q5_KLanesTest, Q6_KLanesTest)
                assertEquals(dot, m.dotRow(row, x, 0), 1e-5 * mag + 1e-30, c.type + " dot row " + row);
            }
        }
    }

    @Test
    void q8_0() {
        check(build(GgmlType.Q8_0, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 32, -128, 127);
            Blocks.q8_0(out, o, d, q);
            for (int j = 0; j < 32; j++) {
                exp[e + j] = q[j] * Blocks.half(d);
            }
        }));
    }

    @Test
    void q4_0() {
        check(build(GgmlType.Q4_0, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 32, 0, 15);
            Blocks.half(out, o, d);
            Blocks.nibbles(out, o + 2, q);
            for (int j = 0; j < 32; j++) {
                exp[e + j] = (q[j] - 8) * Blocks.half(d);
            }
        }));
    }

    @Test
    void q4_1() {
        check(build(GgmlType.Q4_1, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 32, 0, 15);
            int m = 0xB800 | r.nextInt(0x3FF); // a negative min around -0.5..-1
            Blocks.half(out, o, d);
            Blocks.half(out, o + 2, m);
            Blocks.nibbles(out, o + 4, q);
            for (int j = 0; j < 32; j++) {
                exp[e + j] = q[j] * Blocks.half(d) + Blocks.half(m);
            }
        }));
    }

    @Test
    void q5_0() {
        check(build(GgmlType.Q5_0, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 32, 0, 31);
            Blocks.half(out, o, d);
            Blocks.fiveBit(out, o + 2, q);
            for (int j = 0; j < 32; j++) {
                exp[e + j] = (q[j] - 16) * Blocks.half(d);
            }
        }));
    }

    @Test
    void q5_1() {
        check(build(GgmlType.Q5_1, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 32, 0, 31);
            int m = 0x3400 | r.nextInt(0x3FF); // a positive min around 0.25..0.5
            Blocks.half(out, o, d);
            Blocks.half(out, o + 2, m);
            Blocks.fiveBit(out, o + 4, q);
            for (int j = 0; j < 32; j++) {
                exp[e + j] = q[j] * Blocks.half(d) + Blocks.half(m);
            }
        }));
    }

    @Test
    void q2_K() {
        check(build(GgmlType.Q2_K, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 256, 0, 3);
            int[] sc = values(r, 16, 0, 15);
            int[] mn = values(r, 16, 0, 15);
            int dmin = d ^ 0x8000; // the other sign: the layout does not forbid it
            Blocks.q2_K(out, o, d, dmin, sc, mn, q);
            for (int i = 0; i < 256; i++) {
                float dl = Blocks.half(d) * sc[i / 16];
                float ml = Blocks.half(dmin) * mn[i / 16];
                exp[e + i] = dl * q[i] - ml;
            }
        }));
    }

    @Test
    void q3_K() {
        check(build(GgmlType.Q3_K, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 256, -4, 3);
            int[] sc = values(r, 16, -32, 31);
            Blocks.q3_K(out, o, d, sc, q);
            for (int i = 0; i < 256; i++) {
                float dl = Blocks.half(d) * sc[i / 16];
                exp[e + i] = dl * q[i];
            }
        }));
    }

    @Test
    void q4_K() {
        checkSixBitScalesAndMins(GgmlType.Q4_K, 15, Blocks::q4_K);
    }

    @Test
    void q5_K() {
        checkSixBitScalesAndMins(GgmlType.Q5_K, 31, Blocks::q5_K);
    }

    private interface ScaleMinEncoder {
        void write(byte[] out, int o, int d, int dmin, int[] sc, int[] mn, int[] q);
    }

    /** Q4_K and Q5_K: one 6-bit scale and min per 32 values; they differ only in the width of q and its packing. */
    private static void checkSixBitScalesAndMins(GgmlType type, int qMax, ScaleMinEncoder encoder) {
        check(build(type, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 256, 0, qMax);
            int[] sc = values(r, 8, 0, 63);
            int[] mn = values(r, 8, 0, 63);
            int dmin = 0x2000 | r.nextInt(0x3FF);
            encoder.write(out, o, d, dmin, sc, mn, q);
            for (int i = 0; i < 256; i++) {
                float d1 = Blocks.half(d) * sc[i / 32];
                float m1 = Blocks.half(dmin) * mn[i / 32];
                exp[e + i] = d1 * q[i] - m1;
            }
        }));
    }

    @Test
    void q6_K() {
        check(build(GgmlType.Q6_K, (out, o, d, r, exp, e) -> {
            int[] q = values(r, 256, -32, 31);
            int[] sc = values(r, 16, -128, 127);
            Blocks.q6_K(out, o, d, sc, q);
            for (int i = 0; i < 256; i++) {
                exp[e + i] = Blocks.half(d) * sc[i / 16] * q[i];
            }
        }));
    }

    /** Literal bytes, read by hand from the layouts, so the test encoders are anchored too. */
    @Test
    void literalBlocks() {
        // Q4_0, d = 1.0: byte 0 = 0x21 -> value 0 = 1 - 8, value 16 = 2 - 8; byte 1 = 0xF0 -> value 1 = -8, value 17 = 7
        byte[] q40 = new byte[18];
        q40[1] = 0x3C;
        q40[2] = 0x21;
        q40[3] = (byte) 0xF0;
        float[] v = decode(GgmlType.Q4_0, q40, 32);
        assertEquals(-7f, v[0]);
        assertEquals(-6f, v[16]);
        assertEquals(-8f, v[1]);
        assertEquals(7f, v[17]);
        assertEquals(-8f, v[2]);

        // Q5_0, d = 0.5: qh = 0x80000001 -> values 0 and 31 get the fifth bit: 16 - 16, 15 + 16 - 16; value 15: 0 - 16
        byte[] q50 = new byte[22];
        q50[1] = 0x38;
        q50[2] = 0x01;
        q50[5] = (byte) 0x80;
        q50[6 + 15] = (byte) 0xF0;
        v = decode(GgmlType.Q5_0, q50, 32);
        assertEquals(0f, v[0]);
        assertEquals(7.5f, v[31]);
        assertEquals(-8f, v[1]);
        assertEquals(-8f, v[15]);

        // Q4_K, d = 1, dmin = 0: sub-block 5's scale is the low nibble of byte 9 (3) with the top 2 bits of
        // byte 1 (0b10) on top: 0b100011 = 35; value 160 is group 2's first high nibble: qs[64] >> 4 = 2
        byte[] q4k = new byte[144];
        q4k[1] = 0x3C;
        q4k[4 + 1] = (byte) 0x80;
        q4k[4 + 9] = 0x03;
        q4k[16 + 64] = 0x27;
        v = decode(GgmlType.Q4_K, q4k, 256);
        assertEquals(70f, v[160]);
        assertEquals(0f, v[128]); // low nibble 7 in sub-block 4, whose scale is 0

        // Q3_K, d = 1: scale 9 = high nibble of byte 1 (0xA) | bits 4-5 (2 * (9/4)) of byte 9 (0b01) << 4 = 26, minus 32 = -6.
        // value 144 (h=1, j=0, l=16): qs[32 + 16] bits 0-1 = 3, hmask[16] bit 4 set -> 3; so -18
        byte[] q3k = new byte[110];
        q3k[109] = 0x3C;
        q3k[96 + 1] = (byte) 0xA0;
        q3k[96 + 9] = 0x10;
        q3k[32 + 48] = 0x03;
        q3k[16] = 0x10;
        v = decode(GgmlType.Q3_K, q3k, 256);
        assertEquals(-18f, v[144]);

        // Q6_K, d = 2: value 232 = 128 + 96 + 8 (h=1, fourth quarter, l=8): high nibble of ql[64 + 32 + 8], qh[32 + 32 + 8]
        // bits 6-7; scale index 8 + 0 + 6 = 14
        byte[] q6k = new byte[210];
        q6k[209] = 0x40;
        q6k[64 + 40] = (byte) 0x50;
        q6k[128 + 40] = (byte) 0xC0;
        q6k[192 + 14] = -3;
        v = decode(GgmlType.Q6_K, q6k, 256);
        assertEquals(2f * -3 * ((5 | 3 << 4) - 32), v[232]);

        // Q2_K, d = 1, dmin = 1: scale byte 7 = 0x52 (scale 2, min 5) covers values 112..127 (h=0, j=3, l=16..31):
        // value 112 = bits 6-7 of qs[16] = 3 -> 2*3 - 5
        byte[] q2k = new byte[84];
        q2k[7] = 0x52;
        q2k[16 + 16] = (byte) 0xC0;
        q2k[81] = 0x3C;
        q2k[83] = 0x3C;
        v = decode(GgmlType.Q2_K, q2k, 256);
        assertEquals(1f, v[112]);
        assertEquals(-5f, v[113]);
    }

    private static float[] decode(GgmlType type, byte[] block, int cols) {
        float[] out = new float[cols];
        GgmlMatrices.create(type, Blocks.segment(block), 1, cols).decodeRow(0, out, 0);
        return out;
    }
}
