package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.L;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * One-token integer decode of Q4_0 and Q4_K with <em>blocks in lanes</em>: a copy of the matrix in which each group
 * of {@link #G} consecutive blocks of 32 (Q4_K: sub-blocks) of a row is 8 vectors of G 16-bit words, word
 * {@code k'} of lane j holding the nibbles of elements {@code 4k' .. 4k'+3} of block j (element {@code 4k'+i} in
 * bits {@code 4i .. 4i+3}), then the G block scales {@code a} as floats (Q4_0: {@code d}; Q4_K: {@code d * sc}) and,
 * for Q4_K only, G offsets {@code c = dmin * m} (the kernel forms the bias {@code b = 8 * a - c}; kept as c so that
 * the file's values can be decoded from the copy bit for bit). The activation is rounded to int8 per block of 32 by ggml's Q8_0 rule
 * ({@link Input}) and laid out the same way, one G-lane vector per element index. Per group the kernel then
 * multiplies and adds 32 element vectors in 16-bit lanes: each lane ends with block j's exact
 * {@code sum((q - 8) * xq)} (the sums of {@code q * xq} wrap modulo 2^16, but the lane starts at
 * {@code -8 * sum(xq)} and the true result lies within +-32,512, so the wrapped sum is exact), widened, converted
 * and multiplied by the two scales into float lanes; one horizontal sum per row. Q4_K's nibbles are unsigned with
 * an offset per sub-block: {@code sum((d sc q - dmin m) dx xq) = a * dx * s + b * dx * sum(xq)} with s the same
 * {@code sum((q - 8) xq)}, so the same inner loop serves both, plus one multiply-add per block with the
 * activation's {@code dx * sum(xq)}.
 *
 * <p>Rows whose block count is not a multiple of G end with a half-width group ({@link #H} lanes) when at most H
 * blocks remain, else with a full group; either is padded with zero blocks (scale 0): the 3584-wide rows of the 0.8B
 * (112 blocks) and the 2560-wide rows of the 4B (80) then need no padding at G = 32. Memory per block of 32: 20
 * bytes for Q4_0, 24 for Q4_K (the files: 18).
 */
final class Q4Lanes {
    /**
     * Blocks per group: 16-bit lanes of a vector twice as wide as the float vectors (32 with AVX-512, 16 with AVX2;
     * at AVX-512, 16 lanes of 256 bits measured 1.09-1.29x the float kernel against 32 lanes' 1.2-1.8x).
     */
    static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(32 * L));
    static final int G = S.length();
    /** The half-width species of a row's last group, and its lanes. */
    static final VectorSpecies<Short> SH = VectorSpecies.of(short.class, VectorShape.forBitSize(S.vectorBitSize() / 2));
    static final int H = G / 2;
    private static final int PARTS_H = H / L;
    /** Float vectors per group's lanes. */
    private static final int PARTS = G / L;
    static final int BLOCK = 32;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    /** Bytes of one group's nibble words (8 vectors of G). */
    private static final int WORD_BYTES = 8 * 2 * G;
    private static final float ROUNDER = 12582912f;

    /** The two source formats. */
    enum Format {
        Q4_0(false), Q4_K(true);

        /** Whether blocks carry a bias (an offset per block). */
        final boolean biased;
        /** Bytes of one group: the words, the scales, the biases if any. */
        final int groupBytes;

        Format(boolean biased) {
            this.biased = biased;
            this.groupBytes = WORD_BYTES + (biased ? 8 : 4) * G;
        }
    }

    final Format format;
    final int rows;
    final int cols;
    /** Full-width groups per row, and whether a half-width group follows them. */
    final int groups;
    final boolean half;
    final long rowBytes;
    private final boolean biased;
    private final int groupBytes;
    final MemorySegment packed;

    private Q4Lanes(Format format, int rows, int cols, MemorySegment packed) {
        this.format = format;
        this.rows = rows;
        this.cols = cols;
        this.groups = fullGroups(cols);
        this.half = halfGroup(cols);
        this.biased = format.biased;
        this.groupBytes = format.groupBytes;
        this.rowBytes = rowBytes(format, cols);
        this.packed = packed;
    }

    /** Full-width groups of a {@code cols}-wide row (the last one padded if more than H blocks remain for it). */
    static int fullGroups(int cols) {
        int blocks = cols / BLOCK;
        return blocks % G > H ? blocks / G + 1 : blocks / G;
    }

    /** Whether a {@code cols}-wide row ends with a half-width group (1 .. H blocks left after the full ones). */
    static boolean halfGroup(int cols) {
        int rem = cols / BLOCK % G;
        return rem > 0 && rem <= H;
    }

    /** Block slots of a row, padding included. */
    static int slots(int cols) {
        return fullGroups(cols) * G + (halfGroup(cols) ? H : 0);
    }

    /** Lanes of the group that holds block {@code b} of a {@code cols}-wide row. */
    private static int width(int b, int cols) {
        return b / G < fullGroups(cols) ? G : H;
    }

    static long rowBytes(Format format, int cols) {
        return (long) fullGroups(cols) * format.groupBytes + (halfGroup(cols) ? format.groupBytes / 2 : 0);
    }

    /** Bytes the copy of a {@code rows x cols} matrix takes. */
    static long byteSize(Format format, long rows, int cols) {
        return rows * rowBytes(format, cols);
    }

    // The repacks run once per matrix at load, mostly before C2 has compiled them (the first rows interpreted, then
    // C1): each row is copied into a Java array in one bulk copy, built in a short[] image of the copy's row with
    // plain array stores, and copied out in one piece (per-element MemorySegment accesses cost a VarHandle call
    // each outside C2: the primer's tiny 0.8B Q4_K_M model copied its Q4_K matrices in 1.07 s that way, 0.05 s this
    // way; docs/lab/startup.md, round 3). The padding
    // slots of a row's last group are never written: the image and the copy start zeroed, so they stay 0.

    /**
     * Repacks rows {@code [r0, r1)} of the Q4_0 matrix {@code src} (18-byte blocks) into {@code dst}, laid out
     * for {@code rows x cols}.
     */
    static void repackQ4_0(MemorySegment src, int cols, MemorySegment dst, int r0, int r1) {
        int blocks = cols / BLOCK;
        int groupShorts = Format.Q4_0.groupBytes / 2;
        int srcRow = blocks * Q4_0Matrix.BLOCK_BYTES;
        int dstRow = (int) rowBytes(Format.Q4_0, cols);
        byte[] in = new byte[srcRow];
        short[] out = new short[dstRow / 2];
        for (int r = r0; r < r1; r++) {
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, (long) r * srcRow, in, 0, srcRow);
            for (int b = 0; b < blocks; b++) {
                int o = b * Q4_0Matrix.BLOCK_BYTES;
                int g = (b / G) * groupShorts;
                int j = b % G;
                int w = width(b, cols);
                putFloat(out, g + 8 * w + 2 * j, Float.float16ToFloat((short) (in[o] & 0xFF | in[o + 1] << 8)));
                for (int k = 0; k < 4; k++) {
                    // bytes 4k .. 4k+3 hold elements 4k .. 4k+3 in their low nibbles, 16+4k .. 16+4k+3 in their high ones
                    int p = o + 2 + 4 * k;
                    int b0 = in[p], b1 = in[p + 1], b2 = in[p + 2], b3 = in[p + 3];
                    out[g + k * w + j] = (short) (b0 & 0xF | (b1 & 0xF) << 4 | (b2 & 0xF) << 8 | (b3 & 0xF) << 12);
                    out[g + (k + 4) * w + j] = (short) (b0 >> 4 & 0xF | b1 & 0xF0 | (b2 & 0xF0) << 4 | (b3 & 0xF0) << 8);
                }
            }
            MemorySegment.copy(out, 0, dst, SHORT, (long) r * dstRow, out.length);
        }
    }

    /**
     * Repacks rows {@code [r0, r1)} of the Q4_K matrix {@code src} (144-byte super-blocks of 8 sub-blocks) into
     * {@code dst}: sub-block {@code 2h + n} is the low ({@code n = 0}) or high nibbles of bytes {@code 32h ..
     * 32h + 31}; its scale {@code d * sc} and offset {@code dmin * m} as floats. A super-block is 18 little-endian
     * longs: the row is read as longs, and each long of nibbles gives two words of two sub-blocks ({@link #words}).
     */
    static void repackQ4_K(MemorySegment src, int cols, MemorySegment dst, int r0, int r1) {
        int superBlocks = cols / Q4_KMatrix.BLOCK;
        int groupShorts = Format.Q4_K.groupBytes / 2;
        int srcLongs = superBlocks * (Q4_KMatrix.BLOCK_BYTES / 8);
        int dstRow = (int) rowBytes(Format.Q4_K, cols);
        long[] in = new long[srcLongs];
        short[] out = new short[dstRow / 2];
        for (int r = r0; r < r1; r++) {
            MemorySegment.copy(src, U64, (long) r * srcLongs * 8, in, 0, srcLongs);
            for (int sb = 0; sb < superBlocks; sb++) {
                int o = sb * (Q4_KMatrix.BLOCK_BYTES / 8);
                long head = in[o];
                long mid = in[o + 1];
                float d = Float.float16ToFloat((short) head);
                float dmin = Float.float16ToFloat((short) (head >>> 16));
                long lo = head >>> 32 | mid << 32; // scale bytes 0..7 (file bytes 4..11), then 8..11
                int hi = (int) (mid >>> 32);
                long sc = KScales.scales(lo, hi);
                long mn = KScales.mins(lo, hi);
                int b0 = 8 * sb;
                int g = (b0 / G) * groupShorts;
                // a super-block's 8 sub-blocks share a width: G is a multiple of 8, so whole super-blocks leave no half group
                int w = width(b0, cols);
                for (int t = 0; t < 8; t++) {
                    int j = (b0 + t) % G;
                    putFloat(out, g + 8 * w + 2 * j, d * KScales.at(sc, t));
                    putFloat(out, g + 10 * w + 2 * j, dmin * KScales.at(mn, t));
                }
                for (int h = 0; h < 4; h++) {
                    // sub-blocks 2h (low nibbles) and 2h + 1 (high nibbles) of qs bytes 32h .. 32h+31: longs 2+4h ..
                    int j = (b0 + 2 * h) % G;
                    for (int i = 0; i < 4; i++) {
                        long x = in[o + 2 + 4 * h + i];
                        long low = words(x & NIBBLES);
                        long high = words(x >>> 4 & NIBBLES);
                        int k = 2 * i;
                        out[g + k * w + j] = (short) low;
                        out[g + (k + 1) * w + j] = (short) (low >>> 32);
                        out[g + k * w + j + 1] = (short) high;
                        out[g + (k + 1) * w + j + 1] = (short) (high >>> 32);
                    }
                }
            }
            MemorySegment.copy(out, 0, dst, SHORT, (long) r * dstRow, out.length);
        }
    }

    private static final long NIBBLES = 0x0F0F0F0F0F0F0F0FL;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);

    /**
     * Eight bytes' nibbles ({@code y}: each byte 0..15) as two of the copy's words, byte i's nibble in bits
     * {@code 4i .. 4i+3} of the first (bits 0..15) for bytes 0..3, of the second (bits 32..47) for bytes 4..7.
     */
    private static long words(long y) {
        long z = (y | y >>> 4) & 0x00FF00FF00FF00FFL; // byte 2i: nibbles of bytes 2i, 2i+1
        return (z | z >>> 8) & 0x0000FFFF0000FFFFL;
    }

    /** Float {@code v}'s bits as two little-endian shorts at {@code out[at]}, {@code out[at + 1]}. */
    static void putFloat(short[] out, int at, float v) {
        int bits = Float.floatToRawIntBits(v);
        out[at] = (short) bits;
        out[at + 1] = (short) (bits >>> 16);
    }

    /**
     * A copy of the {@code rows x cols} matrix {@code src} of {@code format} in an arena freed with the returned
     * object, made on {@code pool}'s threads (or this one if null).
     */
    static Q4Lanes of(Format format, MemorySegment src, int rows, int cols, Parallel pool) {
        return of(format, src, rows, cols, pool, null);
    }

    /**
     * As {@link #of(Format, MemorySegment, int, int, Parallel)}, in slabs ({@link LazyCopy#inSlabs}); with
     * {@code released} non-null, each slab's file pages are given back once repacked and the bytes released added to
     * {@code released[0]}: the caller guarantees that nothing reads {@code src} then.
     */
    static Q4Lanes of(Format format, MemorySegment src, int rows, int cols, Parallel pool, long[] released) {
        long size = Math.max(1, byteSize(format, rows, cols));
        Arena arena = Arena.ofAuto();
        // in huge pages as the model's weights are (0.8B int4 decode in 4 KiB pages: see docs/lab/integer-decode.md)
        MemorySegment copy = ModelMemory.workingCopy(size, arena);
        Parallel.RangeTask repack = format == Format.Q4_0
                ? (r0, r1) -> repackQ4_0(src, cols, copy, r0, r1)
                : (r0, r1) -> repackQ4_K(src, cols, copy, r0, r1);
        LazyCopy.inSlabs(src, rows, cols, pool, released, repack);
        return new Q4Lanes(format, rows, cols, copy);
    }

    /**
     * One token's activation rounded to int8 per block of 32 as ggml rounds it for its Q8_0 dot products
     * ({@code d = amax / 127}, values rounded to nearest with ties to even, {@code d} kept at fp16 precision):
     * {@code x[g * 32 * G + k * W + j]} is element k of block {@code g * G + j} (W: the group's lanes), {@code d[b]} the block's scale and
     * {@code bias[b]} its {@code -8 * sum(xq)} (the offset 8's share, exact in 16 bits), {@code sums[b]} its
     * {@code d * sum(xq)} (what a block's bias multiplies). {@code y} is {@code x} differenced within each word's four
     * elements, for the kernel without masks ({@link #dotRows}): element {@code 4k'} as in x, element
     * {@code 4k'+i} (i = 1..3) {@code xq[4k'+i] - 16 * xq[4k'+i-1]}.
     */
    record Input(short[] x, float[] d, short[] bias, float[] sums, short[] y) {
        static Input allocate(int cols) {
            int slots = slots(cols);
            return new Input(new short[slots * BLOCK], new float[slots], new short[slots], new float[slots],
                    new short[slots * BLOCK]);
        }

        /** Whether this holds the rounded form of a {@code cols}-wide activation. */
        boolean fits(int cols) {
            return d.length >= slots(cols);
        }

        /** Rounds {@code src[off .. off+cols)} into this (sized for {@code cols}); returns this. */
        Input round(float[] src, int off, int cols) {
            int blocks = cols / BLOCK;
            for (int b = 0; b < blocks; b++) {
                int s = off + b * BLOCK;
                float amax = 0f;
                for (int k = 0; k < BLOCK; k++) {
                    amax = Math.max(amax, Math.abs(src[s + k]));
                }
                float dd = amax / 127f;
                float id = dd != 0f ? 1f / dd : 0f;
                d[b] = Float.float16ToFloat(Float.floatToFloat16(dd));
                int base = (b / G) * BLOCK * G + b % G;
                int w = width(b, cols);
                int sum = 0;
                int prev = 0;
                for (int k = 0; k < BLOCK; k++) {
                    // round to nearest, ties to even: add and remove 1.5 * 2^23 (as the prefill rounding)
                    int q = (int) (src[s + k] * id + ROUNDER - ROUNDER);
                    x[base + k * w] = (short) q;
                    y[base + k * w] = (short) ((k & 3) == 0 ? q : q - 16 * prev);
                    prev = q;
                    sum += q;
                }
                bias[b] = (short) (-8 * sum);
                sums[b] = d[b] * sum;
            }
            // the padding blocks of the last group: zero (the weights' padding has scale 0 as well)
            for (int b = blocks; b < slots(cols); b++) {
                int base = (b / G) * BLOCK * G + b % G;
                int w = width(b, cols);
                for (int k = 0; k < BLOCK; k++) {
                    x[base + k * w] = 0;
                    y[base + k * w] = 0;
                }
            }
            java.util.Arrays.fill(d, blocks, d.length, 0f);
            java.util.Arrays.fill(bias, blocks, bias.length, (short) 0);
            java.util.Arrays.fill(sums, blocks, sums.length, 0f);
            return this;
        }
    }

    /** Row {@code row} times the rounded activation {@code in}. */
    float dot(int row, Input in) {
        short[] x = in.x;
        float[] xd = in.d;
        short[] bias = in.bias;
        float[] xs = in.sums;
        MemorySegment m = packed;
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                int e = xo + 4 * k * G;
                s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        if (half) {
            // the same with H lanes (the written-out copy keeps the vectors unboxed)
            int g = groups;
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(SH, bias, g * G);
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(SH, m, o + 2L * k * H, LE);
                int e = xo + 4 * k * H;
                s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(SH, x, e)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(SH, x, e + H)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(SH, x, e + 2 * H)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(SH, x, e + 3 * H)));
            }
            for (int p = 0; p < PARTS_H; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + 16L * H + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + 20L * H + 4L * p * L, LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    /**
     * Rows {@code [r0, r1)} times {@code in} into {@code out[outOff + r]}: the bits of {@link #dot} (the same 16-bit lane
     * sums, then the same float operations), with the rows' loop inside the kernel so that C2's per-call set-up (range
     * checks hoisted before the loops, constants) is paid once per slice of rows rather than once per row (one group per
     * row on the 1024-wide matrices of the 0.8B), and without the nibble masks: with {@code u_i = w >>> 4i} (the word
     * shifted, the higher nibbles left in) and the differenced activation {@code y} ({@link Input}),
     * {@code sum_i u_i * y_i = sum_i q_i * xq_i} modulo 2^16, since {@code q_i = u_i - 16 * u_{i+1}} and {@code u_4 = 0}:
     * the same lane sums as the masked kernel, three operations fewer per word.
     */
    void dotRows(int r0, int r1, Input in, float[] out, int outOff) {
        short[] x = in.y;
        float[] xd = in.d;
        short[] bias = in.bias;
        float[] xs = in.sums;
        MemorySegment m = packed;
        for (int r = r0; r < r1; r++) {
            long o = r * rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                    int e = xo + 4 * k * G;
                    s = s.add(w.mul(ShortVector.fromArray(S, x, e)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 4).mul(ShortVector.fromArray(S, x, e + G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 8).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
                }
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            if (half) {
                // the same with H lanes (the written-out copy keeps the vectors unboxed)
                int g = groups;
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(SH, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(SH, m, o + 2L * k * H, LE);
                    int e = xo + 4 * k * H;
                    s = s.add(w.mul(ShortVector.fromArray(SH, x, e)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 4).mul(ShortVector.fromArray(SH, x, e + H)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 8).mul(ShortVector.fromArray(SH, x, e + 2 * H)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(SH, x, e + 3 * H)));
                }
                for (int p = 0; p < PARTS_H; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + 16L * H + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + 20L * H + 4L * p * L, LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[outOff + r] = Simd.sum(acc);
        }
    }

    // The decoders' transpose of a group's lanes back to rows. A group's 8 word vectors hold word k of block j in
    // lane j; a quarter of the group's blocks (G/4 of them) with words k0 .. k0+3 (elements 4k0 .. 4k0+15 of each) is
    // two rounds of zips (two-vector selectFrom: one vpermi2w/vpermi2d each with AVX-512): words (k0, k0+1) and
    // (k0+2, k0+3) interleaved as 16-bit lanes, then those pairs as 32-bit lanes, so that 64-bit lane m holds block
    // m's four words. Each output vector of L values then takes L/4 of those words, each word spread over four
    // 32-bit lanes (SPREAD), shifted by 0, 4, 8, 12 (SHIFTS) and masked: the nibbles in row order.
    /** Lane i: lane i/2 of the first table (i even) or of the second (odd), from the tables' lower halves. */
    private static final ShortVector ZIP_S = ShortVector.fromArray(S, zipIndex(G), 0);
    private static final IntVector ZIP_I = IntVector.fromArray(I, ints(zipIndex(G / 2)), 0);
    /** Int lane e (short lane 2e, and 2e+1 whose bits the mask drops) takes word e/4. */
    private static final ShortVector SPREAD = ShortVector.fromArray(S, spreadIndex(), 0);
    private static final IntVector SHIFTS = IntVector.fromArray(I, shifts(), 0);

    private static short[] zipIndex(int n) {
        short[] index = new short[S.length()];
        for (int i = 0; i < index.length && i < 2 * n; i++) {
            index[i] = (short) (i / 2 + (i % 2) * n);
        }
        return index;
    }

    private static int[] ints(short[] index) {
        int[] a = new int[I.length()];
        for (int i = 0; i < a.length; i++) {
            a[i] = index[i];
        }
        return a;
    }

    private static short[] spreadIndex() {
        short[] index = new short[S.length()];
        for (int i = 0; i < index.length; i++) {
            index[i] = (short) (i / 8);
        }
        return index;
    }

    private static int[] shifts() {
        int[] a = new int[I.length()];
        for (int e = 0; e < a.length; e++) {
            a[e] = 4 * (e % 4);
        }
        return a;
    }

    /**
     * One quarter of a group's lanes of four consecutive words ({@code wk}: the first word's vector, {@code w} the
     * group's width), transposed by two rounds of two-vector zips so that each block's four words lie side by side:
     * the shared first step of {@link #decodeRow} and {@link #decodeInts}. Small enough for C2 to inline.
     */
    private static ShortVector quarterWords(MemorySegment m, long wk, int w, int quarter) {
        ShortVector zip = ZIP_S.add((short) ((quarter >> 1) * (G / 2)));
        ShortVector x01 = zip.selectFrom(ShortVector.fromMemorySegment(S, m, wk, LE),
                ShortVector.fromMemorySegment(S, m, wk + 2L * w, LE));
        ShortVector x23 = zip.selectFrom(ShortVector.fromMemorySegment(S, m, wk + 4L * w, LE),
                ShortVector.fromMemorySegment(S, m, wk + 6L * w, LE));
        return ZIP_I.add((quarter & 1) * (G / 4))
                .selectFrom(x01.reinterpretAsInts(), x23.reinterpretAsInts()).reinterpretAsShorts();
    }

    /** Part {@code j} of {@link #quarterWords}' output: L consecutive elements' nibbles in int lanes. */
    private static IntVector nibbles(ShortVector words, int j) {
        return SPREAD.add((short) (j * L / 4)).selectFrom(words).reinterpretAsInts()
                .lanewise(VectorOperators.LSHR, SHIFTS).and(0x0F);
    }

    /**
     * Row {@code row}'s values from the copy into {@code dst[off .. off+cols)}, bit for bit what the file's decoder
     * gives: Q4_0 {@code (q - 8) * d}, Q4_K {@code q * (d * sc) - dmin * m} (the same float operations, on vectors of
     * L values: the transpose above).
     */
    void decodeRow(int row, float[] dst, int off) {
        int blocks = cols / BLOCK;
        MemorySegment m = packed;
        long g = row * rowBytes;
        for (int b0 = 0; b0 < blocks; b0 += G, g += groupBytes) {
            int w = b0 / G < groups ? G : H;
            int n = Math.min(w, blocks - b0);
            for (int y = 0; y < 8; y++) {
                // y / 4: words 0..3 (elements 0..15 of each block) or 4..7 (16..31); y % 4: a quarter of the lanes.
                // A half-width group's words are read G lanes wide: its lanes H.. are the next words (never written)
                int k0 = 4 * (y >> 2);
                int quarter = y & 3;
                int first = quarter * (G / 4);
                if (first >= n) {
                    continue;
                }
                ShortVector words = quarterWords(m, g + 2L * k0 * w, w, quarter);
                for (int j = 0; j < 8; j++) {
                    int b = first + j * L / 16;
                    if (b >= n) {
                        break;
                    }
                    IntVector u = nibbles(words, j);
                    int x = off + (b0 + b) * BLOCK + 4 * k0 + (j * L) % 16;
                    float a = m.get(FLOAT, g + 16L * w + 4L * b);
                    if (biased) {
                        ((FloatVector) u.convert(VectorOperators.I2F, 0)).mul(a)
                                .sub(m.get(FLOAT, g + 20L * w + 4L * b)).intoArray(dst, x);
                    } else {
                        ((FloatVector) u.sub(8).convert(VectorOperators.I2F, 0)).mul(a).intoArray(dst, x);
                    }
                }
            }
        }
    }

    /**
     * {@link Int8Gemm.Int8Rows#decodeInts} from the copy, bit for bit the file's: {@code q - 8} per element (the
     * transpose of {@link #decodeRow}, narrowed to 16 bits), per block of 32 the scale {@code a} and (Q4_K only) the
     * bias {@code 8 * a - dmin * m}.
     */
    void decodeInts(int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        int blocks = cols / BLOCK;
        MemorySegment m = packed;
        long g = row * rowBytes;
        for (int b0 = 0; b0 < blocks; b0 += G, g += groupBytes) {
            int w = b0 / G < groups ? G : H;
            int n = Math.min(w, blocks - b0);
            for (int j = 0; j < n; j++) {
                float a = m.get(FLOAT, g + 16L * w + 4L * j);
                scale[sOff + b0 + j] = a;
                if (biased) {
                    bias[sOff + b0 + j] = 8 * a - m.get(FLOAT, g + 20L * w + 4L * j);
                }
            }
            for (int y = 0; y < 8; y++) {
                int k0 = 4 * (y >> 2);
                int quarter = y & 3;
                int first = quarter * (G / 4);
                if (first >= n) {
                    continue;
                }
                ShortVector words = quarterWords(m, g + 2L * k0 * w, w, quarter);
                for (int j = 0; j < 8; j++) {
                    int b = first + j * L / 16;
                    if (b >= n) {
                        break;
                    }
                    IntVector u = nibbles(words, j);
                    ((ShortVector) u.sub(8).convertShape(VectorOperators.I2S, SH, 0))
                            .intoArray(q, off + (b0 + b) * BLOCK + 4 * k0 + (j * L) % 16);
                }
            }
        }
    }

    /**
     * Rows per step of a product of several tokens (each token runs {@link #dotRows} over the step's rows, read from L1
     * or L2 after the first): 32 rows of 1024 Q4_K weights are 24 KiB of the copy. Four tokens, 16384 x 1024, one
     * thread on Zen 4: 8 rows 1.05x (Q4_0) and 1.21x (Q4_K) the per-row {@code dot} loop, 32 rows 1.09x and 1.37x.
     */
    private static final int ROWS_PER_STEP = 32;

    /** Per thread: the rounded activations of the current decode products, one per token. */
    private static final ThreadLocal<Input[]> ROUNDED = ThreadLocal.withInitial(() -> new Input[0]);

    /** Per thread, {@code n} rounded-activation holders fit for {@code cols}-wide rows. */
    private static Input[] rounded(int n, int cols) {
        Input[] a = ROUNDED.get();
        if (a.length < n) {
            a = java.util.Arrays.copyOf(a, n);
            ROUNDED.set(a);
        }
        for (int t = 0; t < n; t++) {
            if (a[t] == null || !a[t].fits(cols)) {
                a[t] = Input.allocate(cols);
            }
        }
        return a;
    }

    /**
     * A matrix's decode on its copy ({@link LazyCopy}: made on the first product of any number of tokens, or when the
     * loader asks): one-token and independent-token products through one kernel, each token rounded once per product.
     */
    static final class Decode {
        private final int rows;
        private final int cols;
        /** The copy, made on the first product or when the loader asks. */
        final LazyCopy<Q4Lanes> copy;

        Decode(Format format, MemorySegment src, int rows, int cols) {
            this.rows = rows;
            this.cols = cols;
            this.copy = new LazyCopy<>((pool, released) -> of(format, src, rows, cols, pool, released));
        }

        /** The copy, made now (on {@code pool}'s threads, or this one if null) if not yet. */
        Q4Lanes lanes(Parallel pool) {
            return copy.get(pool);
        }

        /** {@code out[t * outStride + outOff + r]} = row r times token t of {@code in}, for every token. */
        void multiply(Parallel pool, dev.edgelm.tensor.Activations in, float[] out, int outStride, int outOff) {
            Q4Lanes l = lanes(pool);
            int n = in.tokens();
            float[] x = in.x();
            // inside a fused section (Parallel#fused) the product runs after other products have rounded their inputs:
            // then inputs of its own, not the thread's
            Input[] xs = pool.fusing() ? new Input[n] : rounded(n, cols).clone();
            for (int t = 0; t < n; t++) {
                if (xs[t] == null) {
                    xs[t] = Input.allocate(cols);
                }
                xs[t].round(x, t * cols, cols);
            }
            // the rows' loop inside the kernel (dotRows); with several tokens a few rows at a time, so that each token
            // reads them from L1
            pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
                if (n == 1) {
                    l.dotRows(start, end, xs[0], out, outOff);
                    return;
                }
                for (int r = start; r < end; r += ROWS_PER_STEP) {
                    int e = Math.min(end, r + ROWS_PER_STEP);
                    for (int t = 0; t < n; t++) {
                        l.dotRows(r, e, xs[t], out, t * outStride + outOff);
                    }
                }
            });
        }

        /** Row {@code row} times {@code x[xOff .. xOff+cols)}, as {@link #multiply} computes it. */
        float dotRow(int row, float[] x, int xOff) {
            return lanes(null).dot(row, rounded(1, cols)[0].round(x, xOff, cols));
        }
    }
}
