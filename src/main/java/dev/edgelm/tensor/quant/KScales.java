package dev.edgelm.tensor.quant;

import java.lang.foreign.MemorySegment;

/** The packed sub-block scales of the k-quant super-blocks (ggml's {@code get_scale_min_k4} and Q3_K's). */
final class KScales {
    private KScales() {}

    /**
     * Scale of sub-block {@code j} (0..7) in the 12 bytes at {@code off} of a Q4_K / Q5_K block: 6 bits,
     * the low 6 of byte j for j < 4, else the low nibble of byte j + 4 with the top 2 bits of byte j - 4.
     */
    static int scale(MemorySegment s, long off, int j) {
        if (j < 4) {
            return Simd.u8(s, off + j) & 63;
        }
        return (Simd.u8(s, off + j + 4) & 0xF) | (Simd.u8(s, off + j - 4) >> 6) << 4;
    }

    /**
     * Min of sub-block {@code j} (0..7): the low 6 bits of byte j + 4 for j < 4, else the high nibble of
     * byte j + 4 with the top 2 bits of byte j.
     */
    static int min(MemorySegment s, long off, int j) {
        if (j < 4) {
            return Simd.u8(s, off + j + 4) & 63;
        }
        return (Simd.u8(s, off + j + 4) >> 4) | (Simd.u8(s, off + j) >> 6) << 4;
    }

    /**
     * Signed scale of sub-block {@code j} (0..15) in the 12 bytes at {@code off} of a Q3_K block: the low
     * nibble of byte j (j < 8) or the high nibble of byte j - 8, with bits 2(j/4)..2(j/4)+1 of byte
     * 8 + j%4 on top, minus 32.
     */
    static int q3Scale(MemorySegment s, long off, int j) {
        int low = j < 8 ? Simd.u8(s, off + j) & 0xF : Simd.u8(s, off + j - 8) >> 4;
        int high = Simd.u8(s, off + 8 + j % 4) >> 2 * (j / 4) & 3;
        return (low | high << 4) - 32;
    }
}
