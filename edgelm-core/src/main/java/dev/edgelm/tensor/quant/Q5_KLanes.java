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
import jdk.incubator.vector.VectorSpecies;

/**
 * One-token integer decode of Q5_K with <em>sub-blocks in lanes</em>, in {@link Q4Lanes}'s scheme and geometry (groups
 * of {@link Q4Lanes#G} sub-blocks of 32 of a row, a half-width group of {@link Q4Lanes#H} at the end of a row where
 * needed, padded with zero sub-blocks). A group of width W is 11 vectors of W 16-bit words, word v of lane j holding
 * three 5-bit values of sub-block j ({@code q0 | q1 << 5 | q2 << 10}, bit 15 clear), then the W scales
 * {@code a = d * sc} and the W offsets {@code c = dmin * m} as floats: 30 bytes per 32 values (the file: 22).
 * Words 0..4 hold elements 0..14 (word v: {@code 3v .. 3v+2}), words 5..9 elements 16..30 (word 5 + v:
 * {@code 16 + 3v ..}), word 10 elements 15 and 31 (the third field zero), so that one loop of five steps fills two
 * accumulators, one per half of the sub-block.
 *
 * <p>The activation is rounded as for Q4_K ({@link Q4Lanes.Input}: int8 per block of 32, ggml's Q8_0 rule). Each
 * half's 16 products {@code q * xq} (q in 0..31) are summed in 16-bit lanes starting from {@code -16 * sum(xq)} over
 * that half: the wrapped sum is then the exact {@code sum((q - 16) * xq)}, which lies within
 * {@code +-16 * 16 * 127 = +-32,512}; the two halves are widened to int and added. Then, as for Q4_K,
 * {@code sum((a q - c) dx xq) = a dx s + (16 a - c) dx sum(xq)}: two multiply-adds per sub-block.
 */
final class Q5_KLanes {
    static final VectorSpecies<Short> S = Q4Lanes.S;
    static final VectorSpecies<Short> SH = Q4Lanes.SH;
    static final int G = Q4Lanes.G;
    static final int H = Q4Lanes.H;
    private static final int PARTS = G / L;
    private static final int PARTS_H = H / L;
    static final int BLOCK = 32;
    /** Words per sub-block (33 five-bit fields, the last one unused). */
    static final int WORDS = 11;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** Bytes per sub-block slot: the words, the scale, the offset. */
    static final int SLOT_BYTES = 2 * WORDS + 8;
    private static final short LOW5 = 0x1F;

    final int rows;
    final int cols;
    final int groups;
    final boolean half;
    final long rowBytes;
    final MemorySegment packed;

    private Q5_KLanes(int rows, int cols, MemorySegment packed) {
        this.rows = rows;
        this.cols = cols;
        this.groups = Q4Lanes.fullGroups(cols);
        this.half = Q4Lanes.halfGroup(cols);
        this.rowBytes = rowBytes(cols);
        this.packed = packed;
    }

    static long rowBytes(int cols) {
        return (long) Q4Lanes.slots(cols) * SLOT_BYTES;
    }

    /** Lanes of the group that holds sub-block {@code b} of a {@code cols}-wide row. */
    private static int width(int b, int cols) {
        return b / G < Q4Lanes.fullGroups(cols) ? G : H;
    }

    /** Word and field (0..2) of element {@code k} of a sub-block. */
    static int word(int k) {
        return k == 15 || k == 31 ? 10 : k < 15 ? k / 3 : 5 + (k - 16) / 3;
    }

    static int field(int k) {
        return k == 15 ? 0 : k == 31 ? 1 : k < 15 ? k % 3 : (k - 16) % 3;
    }

    /**
     * Repacks rows {@code [r0, r1)} of the Q5_K matrix {@code src} (176-byte super-blocks: d, dmin, 12 bytes of scales
     * and mins, 32 bytes {@code qh}, 128 bytes of nibbles) into {@code dst}: element l of sub-block t is the low
     * ({@code t} even) or high nibble of byte {@code 32 (t / 2) + l} of the nibbles, plus 16 times bit t of
     * {@code qh[l]}.
     */
    static void repack(MemorySegment src, int cols, MemorySegment dst, int r0, int r1) {
        // as Q4Lanes' repacks: the row read into an array in one bulk copy, its copy built in a short[] image and
        // written in one (per-element segment accesses cost 0.58 s of load on the 0.8B Q5_K_M, mostly before C2)
        int superBlocks = cols / Q5_KMatrix.BLOCK;
        int srcRow = superBlocks * Q5_KMatrix.BLOCK_BYTES;
        int dstRow = (int) rowBytes(cols);
        byte[] in = new byte[srcRow];
        short[] out = new short[dstRow / 2];
        int[] words = new int[WORDS];
        for (int r = r0; r < r1; r++) {
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, (long) r * srcRow, in, 0, srcRow);
            for (int sb = 0; sb < superBlocks; sb++) {
                int o = sb * Q5_KMatrix.BLOCK_BYTES;
                float d = Float.float16ToFloat((short) (in[o] & 0xFF | in[o + 1] << 8));
                float dmin = Float.float16ToFloat((short) (in[o + 2] & 0xFF | in[o + 3] << 8));
                long lo = 0;
                for (int k = 7; k >= 0; k--) {
                    lo = lo << 8 | in[o + 4 + k] & 0xFF;
                }
                int hi = in[o + 12] & 0xFF | (in[o + 13] & 0xFF) << 8 | (in[o + 14] & 0xFF) << 16 | in[o + 15] << 24;
                long sc = KScales.scales(lo, hi);
                long mn = KScales.mins(lo, hi);
                for (int t = 0; t < 8; t++) {
                    int b = 8 * sb + t;
                    int w = width(b, cols);
                    int g = (b / G) * G * (SLOT_BYTES / 2);
                    int j = b % G;
                    java.util.Arrays.fill(words, 0);
                    for (int l = 0; l < BLOCK; l++) {
                        int nib = in[o + 48 + 32 * (t >> 1) + l] >> 4 * (t & 1) & 0x0F;
                        int hb = in[o + 16 + l] >> t & 1;
                        words[word(l)] |= (nib | hb << 4) << 5 * field(l);
                    }
                    for (int v = 0; v < WORDS; v++) {
                        out[g + v * w + j] = (short) words[v];
                    }
                    Q4Lanes.putFloat(out, g + WORDS * w + 2 * j, d * KScales.at(sc, t));
                    Q4Lanes.putFloat(out, g + (WORDS + 2) * w + 2 * j, dmin * KScales.at(mn, t));
                }
            }
            MemorySegment.copy(out, 0, dst, SHORT, (long) r * dstRow, out.length);
        }
    }

    /**
     * A copy of the {@code rows x cols} Q5_K matrix {@code src} in huge pages ({@link ModelMemory#workingCopy}), freed
     * with the returned object, made on {@code pool}'s threads (or this one if null) in slabs ({@link LazyCopy#inSlabs});
     * the source is kept.
     */
    static Q5_KLanes of(MemorySegment src, int rows, int cols, Parallel pool) {
        MemorySegment copy = ModelMemory.workingCopy(Math.max(1, rows * rowBytes(cols)), Arena.ofAuto());
        LazyCopy.inSlabs(src, rows, cols, pool, null, (r0, r1) -> repack(src, cols, copy, r0, r1));
        return new Q5_KLanes(rows, cols, copy);
    }

    /**
     * One token's activation rounded as {@link Q4Lanes.Input} rounds it, plus per sub-block {@code -16 * sum(xq)} over
     * elements 0..15 ({@code lo}) and 16..31 ({@code hi}): the start of each half's 16-bit sum.
     */
    record Input(Q4Lanes.Input x, short[] lo, short[] hi) {
        static Input allocate(int cols) {
            int slots = Q4Lanes.slots(cols);
            return new Input(Q4Lanes.Input.allocate(cols), new short[slots], new short[slots]);
        }

        boolean fits(int cols) {
            return x.fits(cols);
        }

        Input round(float[] src, int off, int cols) {
            x.round(src, off, cols);
            short[] xq = x.x();
            int blocks = cols / BLOCK;
            for (int b = 0; b < blocks; b++) {
                int base = (b / G) * BLOCK * G + b % G;
                int w = width(b, cols);
                int s0 = 0;
                int s1 = 0;
                for (int k = 0; k < 16; k++) {
                    s0 += xq[base + k * w];
                    s1 += xq[base + (k + 16) * w];
                }
                lo[b] = (short) (-16 * s0);
                hi[b] = (short) (-16 * s1);
            }
            java.util.Arrays.fill(lo, blocks, lo.length, (short) 0);
            java.util.Arrays.fill(hi, blocks, hi.length, (short) 0);
            return this;
        }
    }

    /**
     * Row {@code row} times the rounded activation {@code in}. Small on purpose (the five steps a loop, the half-width
     * group in its own method, the lane sum written out, so that no vector is boxed): C2 parses it whole within its
     * inlining budget, where the 1,775-byte float {@code dot16} it replaces left conversions as calls in about one
     * process in 20.
     */
    float dot(int row, Input in) {
        short[] x = in.x.x();
        float[] xd = in.x.d();
        float[] xs = in.x.sums();
        short[] lo = in.lo;
        short[] hi = in.hi;
        MemorySegment m = packed;
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < groups; g++, o += (long) G * SLOT_BYTES) {
            int xo = g * BLOCK * G;
            ShortVector s0 = ShortVector.fromArray(S, lo, g * G);
            ShortVector s1 = ShortVector.fromArray(S, hi, g * G);
            for (int v = 0; v < 5; v++) {
                ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 2L * v * G, LE);
                ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * (v + 5) * G, LE);
                int e0 = xo + 3 * v * G;
                int e1 = e0 + 16 * G;
                s0 = s0.add(w0.and(LOW5).mul(ShortVector.fromArray(S, x, e0)));
                s1 = s1.add(w1.and(LOW5).mul(ShortVector.fromArray(S, x, e1)));
                s0 = s0.add(w0.lanewise(VectorOperators.LSHR, 5).and(LOW5).mul(ShortVector.fromArray(S, x, e0 + G)));
                s1 = s1.add(w1.lanewise(VectorOperators.LSHR, 5).and(LOW5).mul(ShortVector.fromArray(S, x, e1 + G)));
                s0 = s0.add(w0.lanewise(VectorOperators.LSHR, 10).mul(ShortVector.fromArray(S, x, e0 + 2 * G)));
                s1 = s1.add(w1.lanewise(VectorOperators.LSHR, 10).mul(ShortVector.fromArray(S, x, e1 + 2 * G)));
            }
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 20L * G, LE);
            s0 = s0.add(w2.and(LOW5).mul(ShortVector.fromArray(S, x, xo + 15 * G)));
            s1 = s1.add(w2.lanewise(VectorOperators.LSHR, 5).mul(ShortVector.fromArray(S, x, xo + 31 * G)));
            for (int p = 0; p < PARTS; p++) {
                IntVector s = ((IntVector) s0.convertShape(VectorOperators.S2I, I, p))
                        .add((IntVector) s1.convertShape(VectorOperators.S2I, I, p));
                FloatVector f = (FloatVector) s.convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + 2L * WORDS * G + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                FloatVector b = a.mul(16f).sub(FloatVector.fromMemorySegment(F, m, o + (2L * WORDS + 4) * G + 4L * p * L, LE));
                acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
            }
        }
        // Simd.sum's steps written out (same order): C2 does not inline a call into a method this large
        // (NodeCountInliningCutoff) and would box the vector passed to it, one allocation per row
        if (F.length() >= 16) {
            acc = acc.add(acc.rearrange(Simd.SWAP8));
        }
        if (F.length() >= 8) {
            acc = acc.add(acc.rearrange(Simd.SWAP4));
        }
        acc = acc.add(acc.rearrange(Simd.SWAP2));
        float sum = acc.add(acc.rearrange(Simd.SWAP1)).lane(0);
        return half ? sum + halfGroup(in, o) : sum;
    }

    /**
     * The row's last, half-width group (rows whose sub-block count is not a multiple of {@code G}), at {@code o} in the
     * copy; its own method so that {@link #dot} stays within C2's inlining budget (only scalars and arrays cross the
     * call, nothing to box).
     */
    private float halfGroup(Input in, long o) {
        short[] x = in.x.x();
        float[] xd = in.x.d();
        float[] xs = in.x.sums();
        short[] lo = in.lo;
        short[] hi = in.hi;
        MemorySegment m = packed;
        FloatVector acc = FloatVector.zero(F);
        {
            int g = groups;
            int xo = g * BLOCK * G;
            ShortVector s0 = ShortVector.fromArray(SH, lo, g * G);
            ShortVector s1 = ShortVector.fromArray(SH, hi, g * G);
            for (int v = 0; v < 5; v++) {
                ShortVector w0 = ShortVector.fromMemorySegment(SH, m, o + 2L * v * H, LE);
                ShortVector w1 = ShortVector.fromMemorySegment(SH, m, o + 2L * (v + 5) * H, LE);
                int e0 = xo + 3 * v * H;
                int e1 = e0 + 16 * H;
                s0 = s0.add(w0.and(LOW5).mul(ShortVector.fromArray(SH, x, e0)));
                s1 = s1.add(w1.and(LOW5).mul(ShortVector.fromArray(SH, x, e1)));
                s0 = s0.add(w0.lanewise(VectorOperators.LSHR, 5).and(LOW5).mul(ShortVector.fromArray(SH, x, e0 + H)));
                s1 = s1.add(w1.lanewise(VectorOperators.LSHR, 5).and(LOW5).mul(ShortVector.fromArray(SH, x, e1 + H)));
                s0 = s0.add(w0.lanewise(VectorOperators.LSHR, 10).mul(ShortVector.fromArray(SH, x, e0 + 2 * H)));
                s1 = s1.add(w1.lanewise(VectorOperators.LSHR, 10).mul(ShortVector.fromArray(SH, x, e1 + 2 * H)));
            }
            ShortVector w2 = ShortVector.fromMemorySegment(SH, m, o + 20L * H, LE);
            s0 = s0.add(w2.and(LOW5).mul(ShortVector.fromArray(SH, x, xo + 15 * H)));
            s1 = s1.add(w2.lanewise(VectorOperators.LSHR, 5).mul(ShortVector.fromArray(SH, x, xo + 31 * H)));
            for (int p = 0; p < PARTS_H; p++) {
                IntVector s = ((IntVector) s0.convertShape(VectorOperators.S2I, I, p))
                        .add((IntVector) s1.convertShape(VectorOperators.S2I, I, p));
                FloatVector f = (FloatVector) s.convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + 2L * WORDS * H + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                FloatVector b = a.mul(16f).sub(FloatVector.fromMemorySegment(F, m, o + (2L * WORDS + 4) * H + 4L * p * L, LE));
                acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
            }
        }
        // Simd.sum's steps written out (same order): C2 does not inline a call into a method this large
        // (NodeCountInliningCutoff) and would box the vector passed to it, one allocation per row
        if (F.length() >= 16) {
            acc = acc.add(acc.rearrange(Simd.SWAP8));
        }
        if (F.length() >= 8) {
            acc = acc.add(acc.rearrange(Simd.SWAP4));
        }
        acc = acc.add(acc.rearrange(Simd.SWAP2));
        float sum = acc.add(acc.rearrange(Simd.SWAP1)).lane(0);
        return sum;
    }

    /** Per thread: the rounded activations of the current decode products, one per token. */
    private static final ThreadLocal<Input[]> ROUNDED = ThreadLocal.withInitial(() -> new Input[0]);

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
     * A matrix's decode on its copy ({@link LazyCopy}: made on the first one-token product or when the loader asks):
     * one-token and independent-token products through one kernel, each token rounded once per product.
     */
    static final class Decode {
        private final int rows;
        private final int cols;
        final LazyCopy<Q5_KLanes> copy;

        Decode(MemorySegment src, int rows, int cols) {
            this.rows = rows;
            this.cols = cols;
            this.copy = new LazyCopy<>((pool, released) -> of(src, rows, cols, pool));
        }

        Q5_KLanes lanes(Parallel pool) {
            return copy.get(pool);
        }

        /** {@code out[t * outStride + outOff + r]} = row r times token t of {@code in}, for every token. */
        void multiply(Parallel pool, dev.edgelm.tensor.Activations in, float[] out, int outStride, int outOff) {
            Q5_KLanes l = lanes(pool);
            int n = in.tokens();
            float[] x = in.x();
            // inside a fused section (Parallel#fused) other products may have rounded their inputs into the thread's
            Input[] xs = pool.fusing() ? new Input[n] : rounded(n, cols).clone();
            for (int t = 0; t < n; t++) {
                if (xs[t] == null) {
                    xs[t] = Input.allocate(cols);
                }
                xs[t].round(x, t * cols, cols);
            }
            pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
                for (int r = start; r < end; r++) {
                    for (int t = 0; t < n; t++) {
                        out[t * outStride + outOff + r] = l.dot(r, xs[t]);
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
