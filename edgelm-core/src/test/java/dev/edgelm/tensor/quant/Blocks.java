package dev.edgelm.tensor.quant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Test-side encoders of ggml's block layouts, written from the packing loops of ggml's reference
 * quantisers (not from the decoders under test), plus an IEEE half decoder written from the format's
 * definition. Each {@code pack*} writes one block of logical values into {@code out} at {@code o}.
 */
final class Blocks {
    private Blocks() {}

    static MemorySegment segment(byte[] bytes) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, bytes.length), 16);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, s, 0, bytes.length);
        return s.asSlice(0, bytes.length);
    }

    /** IEEE binary16 to float from the definition: sign, 5-bit exponent (bias 15), 10-bit fraction. */
    static float half(int bits) {
        int sign = (bits >> 15) & 1;
        int exp = (bits >> 10) & 0x1F;
        int frac = bits & 0x3FF;
        double v;
        if (exp == 0) {
            v = Math.scalb((double) frac, -24);
        } else if (exp == 31) {
            v = frac == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else {
            v = Math.scalb(1024.0 + frac, exp - 25);
        }
        return (float) (sign == 1 ? -v : v);
    }

    static void half(byte[] out, int o, int bits) {
        out[o] = (byte) bits;
        out[o + 1] = (byte) (bits >> 8);
    }

    /** Q8_0: d, then q[0..31] as int8. */
    static void q8_0(byte[] out, int o, int d, int[] q) {
        half(out, o, d);
        for (int j = 0; j < 32; j++) {
            out[o + 2 + j] = (byte) q[j];
        }
    }

    /** Q4_0 / Q4_1 nibbles: byte j = q[j] | q[j + 16] << 4. */
    static void nibbles(byte[] out, int o, int[] q) {
        for (int j = 0; j < 16; j++) {
            out[o + j] = (byte) (q[j] | q[j + 16] << 4);
        }
    }

    /** Q5_0 / Q5_1: low nibbles as Q4_0, fifth bit of value j in bit j of a little-endian u32 before them. */
    static void fiveBit(byte[] out, int qhOff, int[] q) {
        int qh = 0;
        int[] low = new int[32];
        for (int j = 0; j < 32; j++) {
            low[j] = q[j] & 0xF;
            qh |= ((q[j] >> 4) & 1) << j;
        }
        for (int k = 0; k < 4; k++) {
            out[qhOff + k] = (byte) (qh >> 8 * k);
        }
        nibbles(out, qhOff + 4, low);
    }

    /** The 2-bit plane packing shared by Q2_K and Q3_K: qs[j/4 + l] = L[j+l] | L[j+l+32]<<2 | ... for j = 0, 128. */
    static void twoBitPlanes(byte[] out, int o, int[] low2) {
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; l++) {
                out[o + j / 4 + l] = (byte) (low2[j + l] | low2[j + l + 32] << 2 | low2[j + l + 64] << 4 | low2[j + l + 96] << 6);
            }
        }
    }

    /** Q2_K: scales[16] (scale | min << 4), qs[64], d, dmin. q in 0..3. */
    static void q2_K(byte[] out, int o, int d, int dmin, int[] sc, int[] mn, int[] q) {
        for (int j = 0; j < 16; j++) {
            out[o + j] = (byte) (sc[j] | mn[j] << 4);
        }
        twoBitPlanes(out, o + 16, q);
        half(out, o + 80, d);
        half(out, o + 82, dmin);
    }

    /** Q3_K: hmask[32], qs[64], scales[12], d. q in -4..3, sc in -32..31. */
    static void q3_K(byte[] out, int o, int d, int[] sc, int[] q) {
        byte[] scales = new byte[12];
        for (int j = 0; j < 16; j++) {
            int l = sc[j] + 32;
            if (j < 8) {
                scales[j] = (byte) (l & 0xF);
            } else {
                scales[j - 8] |= (byte) ((l & 0xF) << 4);
            }
            scales[j % 4 + 8] |= (byte) ((l >> 4) << (2 * (j / 4)));
        }
        int[] low2 = new int[256];
        int m = 0;
        int hm = 1;
        for (int j = 0; j < 256; j++) {
            int l = q[j] + 4;
            if (l > 3) {
                out[o + m] |= (byte) hm;
                l -= 4;
            }
            low2[j] = l;
            if (++m == 32) {
                m = 0;
                hm <<= 1;
            }
        }
        twoBitPlanes(out, o + 32, low2);
        System.arraycopy(scales, 0, out, o + 96, 12);
        half(out, o + 108, d);
    }

    /** The 12-byte 6-bit scale/min packing of Q4_K and Q5_K. */
    static void kScales(byte[] out, int o, int[] sc, int[] mn) {
        for (int j = 0; j < 8; j++) {
            int ls = sc[j];
            int lm = mn[j];
            if (j < 4) {
                out[o + j] = (byte) ls;
                out[o + j + 4] = (byte) lm;
            } else {
                out[o + j + 4] = (byte) ((ls & 0xF) | (lm & 0xF) << 4);
                out[o + j - 4] |= (byte) ((ls >> 4) << 6);
                out[o + j] |= (byte) ((lm >> 4) << 6);
            }
        }
    }

    /** Q4_K: d, dmin, scales[12], qs[128]; q in 0..15, sc/mn in 0..63 per 32 values. */
    static void q4_K(byte[] out, int o, int d, int dmin, int[] sc, int[] mn, int[] q) {
        half(out, o, d);
        half(out, o + 2, dmin);
        kScales(out, o + 4, sc, mn);
        int qo = o + 16;
        for (int j = 0; j < 256; j += 64) {
            for (int l = 0; l < 32; l++) {
                out[qo + l] = (byte) (q[j + l] | q[j + l + 32] << 4);
            }
            qo += 32;
        }
    }

    /** Q5_K: d, dmin, scales[12], qh[32], qs[128]; q in 0..31. */
    static void q5_K(byte[] out, int o, int d, int dmin, int[] sc, int[] mn, int[] q) {
        half(out, o, d);
        half(out, o + 2, dmin);
        kScales(out, o + 4, sc, mn);
        int qh = o + 16;
        int ql = o + 48;
        int m1 = 1;
        int m2 = 2;
        for (int n = 0; n < 256; n += 64) {
            for (int j = 0; j < 32; j++) {
                int l1 = q[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    out[qh + j] |= (byte) m1;
                }
                int l2 = q[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    out[qh + j] |= (byte) m2;
                }
                out[ql + j] = (byte) (l1 | l2 << 4);
            }
            m1 <<= 2;
            m2 <<= 2;
            ql += 32;
        }
    }

    /** Q6_K: ql[128], qh[64], scales[16] int8, d; q in -32..31. */
    static void q6_K(byte[] out, int o, int d, int[] sc, int[] q) {
        int ql = o;
        int qh = o + 128;
        for (int j = 0; j < 256; j += 128) {
            for (int l = 0; l < 32; l++) {
                int a = q[j + l] + 32;
                int b = q[j + l + 32] + 32;
                int c = q[j + l + 64] + 32;
                int e = q[j + l + 96] + 32;
                out[ql + l] = (byte) ((a & 0xF) | (c & 0xF) << 4);
                out[ql + l + 32] = (byte) ((b & 0xF) | (e & 0xF) << 4);
                out[qh + l] = (byte) (a >> 4 | (b >> 4) << 2 | (c >> 4) << 4 | (e >> 4) << 6);
            }
            ql += 64;
            qh += 32;
        }
        for (int j = 0; j < 16; j++) {
            out[o + 192 + j] = (byte) sc[j];
        }
        half(out, o + 208, d);
    }
}
