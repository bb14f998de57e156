package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.L;

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
 * One-token integer decode of Q4_0 with <em>blocks in lanes</em>: a copy of the matrix in which each group of
 * {@link #G} consecutive blocks of a row is 8 vectors of G 16-bit words, word {@code k'} of lane j holding the
 * nibbles of elements {@code 4k' .. 4k'+3} of block j (element {@code 4k'+i} in bits {@code 4i .. 4i+3}), then the
 * G block scales as floats. The activation is rounded to int8 per block of 32 by ggml's Q8_0 rule
 * ({@link Input}) and laid out the same way, one G-lane vector per element index. Per group the kernel then
 * multiplies and adds 32 element vectors in 16-bit lanes: each lane ends with block j's exact
 * {@code sum((q - 8) * xq)} (the sums of {@code q * xq} wrap modulo 2^16, but the lane starts at
 * {@code -8 * sum(xq)} and the true result lies within +-32,512, so the wrapped sum is exact), widened, converted
 * and multiplied by the two scales into float lanes; one horizontal sum per row.
 *
 * <p>Rows whose block count is not a multiple of G end with a group padded with zero blocks (scale 0). Memory:
 * 20 bytes per block of 32 (the file's 18 plus the scale as a float), padding included.
 */
final class Q4Lanes {
    /**
     * Blocks per group: 16-bit lanes of a vector twice as wide as the float vectors (32 at AVX-512, 16 with AVX2),
     * or {@code -Dedgelm.q4.lanes=16|32}.
     */
    static final VectorSpecies<Short> S = VectorSpecies.of(short.class,
            VectorShape.forBitSize(16 * Math.max(L, Integer.getInteger("edgelm.q4.lanes", 2 * L))));
    static final int G = S.length();
    /** Float vectors per group's lanes. */
    private static final int PARTS = G / L;
    static final int BLOCK = 32;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    /** Bytes of one group: 8 word vectors then G float scales. */
    static final int GROUP_BYTES = 8 * 2 * G + 4 * G;
    private static final float ROUNDER = 12582912f;

    final int rows;
    final int cols;
    final int groups;
    final long rowBytes;
    final MemorySegment packed;

    private Q4Lanes(int rows, int cols, MemorySegment packed) {
        this.rows = rows;
        this.cols = cols;
        this.groups = groups(cols);
        this.rowBytes = (long) groups * GROUP_BYTES;
        this.packed = packed;
    }

    static int groups(int cols) {
        return (cols / BLOCK + G - 1) / G;
    }

    /** Bytes the copy of a {@code rows x cols} matrix takes. */
    static long byteSize(long rows, int cols) {
        return rows * groups(cols) * GROUP_BYTES;
    }

    /**
     * Repacks rows {@code [r0, r1)} of the Q4_0 matrix {@code src} (18-byte blocks) into {@code dst}, laid out
     * for {@code rows x cols}.
     */
    static void repack(MemorySegment src, int cols, MemorySegment dst, int r0, int r1) {
        int blocks = cols / BLOCK;
        long srcRow = (long) blocks * Q4_0Matrix.BLOCK_BYTES;
        long dstRow = (long) groups(cols) * GROUP_BYTES;
        for (int r = r0; r < r1; r++) {
            for (int b = 0; b < blocks; b++) {
                long o = r * srcRow + (long) b * Q4_0Matrix.BLOCK_BYTES;
                long g = r * dstRow + (long) (b / G) * GROUP_BYTES;
                int j = b % G;
                dst.set(FLOAT, g + 16L * G + 4L * j, Simd.fp16(src, o));
                for (int k = 0; k < 4; k++) {
                    // bytes 4k .. 4k+3 hold elements 4k .. 4k+3 in their low nibbles, 16+4k .. 16+4k+3 in their high ones
                    int u = src.get(U32, o + 2 + 4 * k);
                    dst.set(SHORT, g + 2L * (k * G + j), nibbles(u));
                    dst.set(SHORT, g + 2L * ((k + 4) * G + j), nibbles(u >>> 4));
                }
            }
        }
    }

    /** The low nibbles of the four bytes of {@code u}, byte i's in bits {@code 4i .. 4i+3}. */
    private static short nibbles(int u) {
        return (short) ((u & 0xF) | (u >>> 4 & 0xF0) | (u >>> 8 & 0xF00) | (u >>> 12 & 0xF000));
    }

    /** A copy of the {@code rows x cols} Q4_0 matrix {@code src} in an arena freed with the returned object. */
    static Q4Lanes of(MemorySegment src, int rows, int cols, Parallel pool) {
        MemorySegment dst = Arena.ofAuto().allocate(Math.max(1, byteSize(rows, cols)), 64);
        if (pool == null) {
            repack(src, cols, dst, 0, rows);
        } else {
            pool.forRange(rows, 1, (long) rows * cols, (r0, r1) -> repack(src, cols, dst, r0, r1));
        }
        return new Q4Lanes(rows, cols, dst);
    }

    /**
     * One token's activation rounded to int8 per block of 32 as ggml rounds it for its Q8_0 dot products
     * ({@code d = amax / 127}, values rounded to nearest with ties to even, {@code d} kept at fp16 precision):
     * {@code x[(g * 32 + k) * G + j]} is element k of block {@code g * G + j}, {@code d[b]} the block's scale and
     * {@code bias[b]} its {@code -8 * sum(xq)} (the Q4_0 offset's share, exact in 16 bits).
     */
    record Input(short[] x, float[] d, short[] bias) {
        static Input allocate(int cols) {
            int groups = groups(cols);
            return new Input(new short[groups * BLOCK * G], new float[groups * G], new short[groups * G]);
        }

        /** Whether this holds the rounded form of a {@code cols}-wide activation. */
        boolean fits(int cols) {
            return d.length >= groups(cols) * G;
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
                int sum = 0;
                for (int k = 0; k < BLOCK; k++) {
                    // round to nearest, ties to even: add and remove 1.5 * 2^23 (as the prefill rounding)
                    int q = (int) (src[s + k] * id + ROUNDER - ROUNDER);
                    x[base + k * G] = (short) q;
                    sum += q;
                }
                bias[b] = (short) (-8 * sum);
            }
            // the padding blocks of the last group: zero (the weights' padding has scale 0 as well)
            for (int b = blocks; b < groups(cols) * G; b++) {
                int base = (b / G) * BLOCK * G + b % G;
                for (int k = 0; k < BLOCK; k++) {
                    x[base + k * G] = 0;
                }
            }
            java.util.Arrays.fill(d, blocks, d.length, 0f);
            java.util.Arrays.fill(bias, blocks, bias.length, (short) 0);
            return this;
        }
    }

    /** Row {@code row} times the rounded activation {@code in}. */
    float dot(int row, Input in) {
        short[] x = in.x;
        float[] xd = in.d;
        short[] bias = in.bias;
        MemorySegment m = packed;
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < groups; g++, o += GROUP_BYTES) {
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
                FloatVector dw = FloatVector.fromMemorySegment(F, m, o + 16L * G + 4L * p * L, LE);
                acc = f.mul(dw).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
            }
        }
        return Simd.sum(acc);
    }
}
