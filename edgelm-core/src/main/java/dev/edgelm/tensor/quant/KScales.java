package dev.edgelm.tensor.quant;

import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;

/**
 * The packed sub-block scales of the k-quant super-blocks (ggml's {@code get_scale_min_k4} and Q3_K's),
 * unpacked once per super-block into words holding one value per byte (value j in bits 8j..8j+7), so that
 * the hot loops pick a scale with one shift and mask instead of calling a decoder per sub-block (C2 does
 * not always inline such a call in a large loop). The 12 scale bytes arrive as {@code lo} (bytes 0..7)
 * and {@code hi} (bytes 8..11).
 */
final class KScales {
    private static final long LOW6 = 0x3F3F3F3FL;
    private static final int LOW4 = 0x0F0F0F0F;
    private static final int LOW2 = 0x03030303;

    private KScales() {}

    /**
     * The 8 six-bit scales of a Q4_K / Q5_K block: scale j < 4 is the low 6 bits of byte j; scale j >= 4 is
     * the low nibble of byte j + 4 with the top 2 bits of byte j - 4 above it.
     */
    static long scales(long lo, int hi) {
        long first = lo & LOW6;
        int rest = hi & LOW4 | ((int) lo >>> 6 & LOW2) << 4;
        return first | (rest & 0xFFFFFFFFL) << 32;
    }

    /**
     * The 8 six-bit mins: min j < 4 is the low 6 bits of byte j + 4; min j >= 4 is the high nibble of byte
     * j + 4 with the top 2 bits of byte j above it.
     */
    static long mins(long lo, int hi) {
        long first = lo >>> 32 & LOW6;
        int rest = hi >>> 4 & LOW4 | ((int) (lo >>> 32) >>> 6 & LOW2) << 4;
        return first | (rest & 0xFFFFFFFFL) << 32;
    }

    /**
     * Q3_K's 16 six-bit scales (stored biased by 32), {@code half} 0 for scales 0..7, 1 for 8..15: scale j
     * is the low nibble of byte j (j < 8) or the high nibble of byte j - 8, with bits 2(j/4)..2(j/4)+1 of
     * byte 8 + j%4 above it.
     */
    static long q3Scales(long lo, int hi, int half) {
        long low = lo >>> 4 * half & 0x0F0F0F0F0F0F0F0FL;
        int shift = 4 * half;
        long high = (hi >>> shift & LOW2) | (long) (hi >>> shift + 2 & LOW2) << 32;
        return low | high << 4;
    }

    /** Byte j of a word made by the methods above. */
    static int at(long word, int j) {
        return (int) (word >>> 8 * j) & 0xFF;
    }

    // The 16-lane form of scales() and mins() for the AVX-512 kernels: the 12 scale bytes, widened to the
    // int lanes 0..11 of a vector, give lanes 0..7 = the 8 mins and lanes 8..15 = the 8 scales as
    // (raw[PICK_LOW] >>> SHIFT_LOW & MASK_LOW) | (raw[PICK_HIGH] >>> 2 & MASK_HIGH), where the second
    // term places the top 2 bits of a byte at bits 4..5 (see scales() and mins() for the packing).
    // Only built for 16-lane vectors (null otherwise).
    static final VectorShuffle<Integer> PICK_LOW = intShuffle(4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11);
    static final VectorShuffle<Integer> PICK_HIGH = intShuffle(0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0, 0, 1, 2, 3);
    static final IntVector SHIFT_LOW = ints(0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    static final IntVector MASK_LOW = ints(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15);
    static final IntVector MASK_HIGH = ints(0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30);
    /** Lanes 8..15: where the scales are (the mins are in the others). */
    static final VectorMask<Float> SCALE_LANES = floatMask(8);
    /** Lanes 0..7: the mins. */
    static final VectorMask<Float> MIN_LANES = SCALE_LANES == null ? null : SCALE_LANES.not();

    private static VectorShuffle<Integer> intShuffle(int... index) {
        return Simd.I.length() == 16 ? VectorShuffle.fromArray(Simd.I, index, 0) : null;
    }

    private static IntVector ints(int... values) {
        return Simd.I.length() == 16 ? IntVector.fromArray(Simd.I, values, 0) : null;
    }

    private static VectorMask<Float> floatMask(int from) {
        if (Simd.F.length() != 16) {
            return null;
        }
        boolean[] set = new boolean[16];
        for (int i = from; i < 16; i++) {
            set[i] = true;
        }
        return VectorMask.fromArray(Simd.F, set, 0);
    }

    // The 8-lane form (AVX2) of scales() and mins(): raw0 = bytes 0..7 and raw1 = bytes 4..11 of the 12,
    // widened to int lanes, give
    //   mins   = (raw1 >>> SHIFT8 & MASK_LOW8) | (raw0 >>> 2 & MASK_HIGH8)
    //   scales = (blend(raw0, raw1, UPPER4) & MASK_LOW8) | (raw0[SPREAD] >>> 2 & MASK_HIGH8)
    // where the second terms place the top 2 bits of bytes 4..7 (mins) or 0..3 (scales) at bits 4..5 of
    // lanes 4..7. Only built for 8-lane vectors (null otherwise).
    static final IntVector SHIFT8 = ints8(0, 0, 0, 0, 4, 4, 4, 4);
    static final IntVector MASK_LOW8 = ints8(63, 63, 63, 63, 15, 15, 15, 15);
    static final IntVector MASK_HIGH8 = ints8(0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30);
    static final VectorShuffle<Integer> SPREAD = Simd.I.length() == 8
            ? VectorShuffle.fromArray(Simd.I, new int[] {0, 0, 0, 0, 0, 1, 2, 3}, 0) : null;
    static final VectorMask<Integer> UPPER4 = Simd.I.length() == 8
            ? VectorMask.fromArray(Simd.I, new boolean[] {false, false, false, false, true, true, true, true}, 0) : null;

    private static IntVector ints8(int... values) {
        return Simd.I.length() == 8 ? IntVector.fromArray(Simd.I, values, 0) : null;
    }
}
