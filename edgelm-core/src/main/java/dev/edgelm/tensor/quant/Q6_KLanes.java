package dev.edgelm.tensor.quant;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K's one-token product in 16-bit integers, with the sub-blocks in lanes. A Q6_K super-block is 16 sub-blocks of
 * 16 values, each with its own int8 scale, so a per-sub-block integer sum is needed: here lane j of a vector holds
 * sub-block j, and element k of 32 sub-blocks (two super-blocks) is one 32-byte load, widened to 32 shorts and
 * multiplied by the activations' element k of the same sub-blocks ({@code ShortVector.mul}: 32 products per
 * instruction at 512 bits). The activations are rounded to int8 once per token by ggml's Q8_K rule (one float scale
 * per 256, {@code iscale = -127 / max}, ties to even: what llama.cpp does for every K-quant), so
 * {@code |(q - 32) x| <= 32 * 127} and 8 products fit a 16-bit lane: elements 0..7 and 8..15 sum in two short
 * accumulators, widened to int once per super-block, times the sub-block's scale (exact in int: at most
 * 16 * 4064 * 128 < 2^24, so also exact as a float), converted and multiplied by {@code d * dx}.
 *
 * <p>The weights live in a copy made once per matrix ({@link #repack}): per row, super-blocks in pairs of
 * {@value #PAIR_BYTES} bytes: {@code q - 32} as int8 in the order [element k][lane: 16 sub-blocks of the first,
 * then 16 of the second] (512 bytes), the 32 int8 scales, the two {@code d} as floats; a row with an odd number of
 * super-blocks ends in one of {@value #TAIL_BYTES} bytes: [k][16 sub-blocks], 16 scales, {@code d}. 1.08 bytes per
 * weight against the file's 0.82. The activations take the same order ({@link #quantize}). Shapes: 512-bit
 * (the pair in one pass) or 256-bit vectors (two halves; the AVX2 shape, tested but not used there).
 */
final class Q6_KLanes {
    static final int PAIR_BYTES = 512 + 32 + 8;
    static final int TAIL_BYTES = 256 + 16 + 4;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);

    /** Shorts of a pair's lanes at a time: 32 (512 bits) or 16 (256 bits: the pair in two halves). */
    private static final VectorSpecies<Short> S = Simd.L >= 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;
    private static final VectorSpecies<Byte> SB = VectorSpecies.of(byte.class, VectorShape.forBitSize(8 * S.length()));
    /** The tail's 16 lanes. */
    private static final VectorSpecies<Short> S16 = ShortVector.SPECIES_256;
    private static final VectorSpecies<Byte> SB16 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Integer> I = Simd.I;
    private static final VectorSpecies<Float> F = Simd.F;
    private static final VectorSpecies<Byte> BI = VectorSpecies.of(byte.class, VectorShape.forBitSize(8 * I.length()));

    private Q6_KLanes() {}

    /** Bytes of one repacked row of {@code blocks} super-blocks. */
    static long rowBytes(int blocks) {
        return (long) (blocks / 2) * PAIR_BYTES + (blocks % 2) * TAIL_BYTES;
    }

    /** Where element k of sub-block g of super-block b goes in a row of {@code blocks}, counted in lanes (shorts). */
    static int lane(int blocks, int b, int g, int k) {
        int pairs = blocks / 2;
        if (b < 2 * pairs) {
            return (b / 2) * 512 + 32 * k + 16 * (b & 1) + g;
        }
        return pairs * 512 + 16 * k + g;
    }

    /**
     * The repacked copy of a Q6_K matrix's rows (file layout in {@code src}), in {@code arena}; made on {@code pool}'s
     * threads, or on the calling thread if {@code pool} is null.
     */
    static MemorySegment repack(MemorySegment src, int rows, int cols, Arena arena, Parallel pool) {
        return repack(src, rows, cols, arena, pool, null);
    }

    /**
     * As {@link #repack(MemorySegment, int, int, Arena, Parallel)}, in slabs ({@link LazyCopy#inSlabs}); with
     * {@code released} non-null each slab's file pages are given back once repacked ({@link ModelMemory#release}), the
     * bytes added to {@code released[0]}: the caller guarantees that nothing reads {@code src} then.
     */
    static MemorySegment repack(MemorySegment src, int rows, int cols, Arena arena, Parallel pool, long[] released) {
        int blocks = cols / Q6_KMatrix.BLOCK;
        MemorySegment dst = ModelMemory.workingCopy(rowBytes(blocks) * rows, arena);
        LazyCopy.inSlabs(src, rows, cols, pool, released, (r0, r1) -> repackRows(src, dst, blocks, r0, r1));
        return dst;
    }

    /** Eight bytes of a byte[] as a little-endian long. */
    private static final java.lang.invoke.VarHandle BYTES_AS_LONG =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, LE);

    /**
     * Rows {@code [start, end)}: each row copied into an array in one piece, its super-blocks written into the row's
     * image with array stores (fused: the 6-bit values straight from their {@code ql} and {@code qh} bytes to their lanes,
     * eight at a time in a long, no divisions), the image copied out in one piece.
     */
    private static void repackRows(MemorySegment src, MemorySegment dst, int blocks, int start, int end) {
        int fileRow = blocks * Q6_KMatrix.BLOCK_BYTES;
        int rb = (int) rowBytes(blocks);
        byte[] in = new byte[fileRow];
        byte[] out = new byte[rb];
        for (int r = start; r < end; r++) {
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, (long) r * fileRow, in, 0, fileRow);
            for (int b = 0; b < blocks; b++) {
                int o = b * Q6_KMatrix.BLOCK_BYTES;
                int at = (b / 2) * PAIR_BYTES;
                boolean tail = b >= 2 * (blocks / 2);
                int width = tail ? 16 : 32;
                int first = tail ? 0 : 16 * (b & 1);
                for (int h = 0; h < 2; h++) {
                    for (int quarter = 0; quarter < 4; quarter++) {
                        // values 128h + 32 quarter + l, l = 0..31: sub-block 8h + 2 quarter + l / 16, element l % 16
                        int ql = o + 64 * h + 32 * (quarter & 1);
                        int qh = o + 128 + 32 * h;
                        int lowShift = 4 * (quarter >> 1);
                        int highShift = 2 * quarter;
                        int lane = at + first + 8 * h + 2 * quarter;
                        for (int l = 0; l < 32; l += 8) {
                            // eight values at once in a long: 6 bits each, then q - 32 per byte without borrows
                            long q = (long) BYTES_AS_LONG.get(in, ql + l) >>> lowShift & 0x0F0F0F0F0F0F0F0FL
                                    | ((long) BYTES_AS_LONG.get(in, qh + l) >>> highShift & 0x0303030303030303L) << 4;
                            q = ((q | 0x8080808080808080L) - 0x2020202020202020L) ^ 0x8080808080808080L;
                            int to = lane + width * (l & 15) + (l >> 4);
                            for (int i = 0; i < 8; i++, to += width) {
                                out[to] = (byte) (q >>> 8 * i);
                            }
                        }
                    }
                }
                int scales = at + 16 * width;
                System.arraycopy(in, o + 192, out, scales + first, 16);
                int d = Float.floatToRawIntBits(Float.float16ToFloat((short) (in[o + 208] & 0xFF | in[o + 209] << 8)));
                int dAt = scales + width + 4 * (first / 16);
                for (int i = 0; i < 4; i++) {
                    out[dAt + i] = (byte) (d >>> 8 * i);
                }
            }
            MemorySegment.copy(out, 0, dst, ValueLayout.JAVA_BYTE, (long) r * rb, rb);
        }
    }

    // decodeRow's transpose of a pair's lanes back to rows (512-bit vectors only: the copy exists only there). A pair
    // is 16 rows (element k) of 32 bytes (lane: sub-block), widened to 32 shorts each; four rounds of two-vector zips
    // (vpermi2w, vpermi2d, vpermi2q, vpermi2q) gather a sub-block's 16 elements into one 256-bit half: round 1 pairs
    // rows 2i and 2i+1 for one super-block's 16 lanes, round 2 pairs those pairs (32-bit units), round 3 the 64-bit
    // units, round 4 the 128-bit units. Byte permutes are avoided: 512-bit ones need VBMI, which not every AVX-512
    // CPU has (without it C2 leaves them to the Java fallback).
    private static final VectorSpecies<Short> S32 = ShortVector.SPECIES_512;
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Long> L8 = LongVector.SPECIES_512;
    /** Lane i: lane i/2 of the first table (i even) or of the second (odd), from the lower halves; add n/2 for the upper. */
    private static final ShortVector ZIP16 = ShortVector.fromArray(S32, zip16(), 0);
    private static final IntVector ZIP32 = IntVector.fromArray(I16, zip32(), 0);
    private static final LongVector ZIP64 = LongVector.fromArray(L8, zip64(), 0);
    /** The same for 128-bit units (pairs of 64-bit lanes); add 4 for the upper halves. */
    private static final LongVector ZIP128 = LongVector.fromArray(L8, zip128(), 0);

    private static short[] zip16() {
        short[] a = new short[32];
        for (int i = 0; i < 32; i++) {
            a[i] = (short) (i / 2 + (i % 2) * 32);
        }
        return a;
    }

    private static int[] zip32() {
        int[] a = new int[16];
        for (int i = 0; i < 16; i++) {
            a[i] = i / 2 + (i % 2) * 16;
        }
        return a;
    }

    private static long[] zip64() {
        long[] a = new long[8];
        for (int i = 0; i < 8; i++) {
            a[i] = i / 2 + (i % 2) * 8;
        }
        return a;
    }

    private static long[] zip128() {
        long[] a = new long[8];
        for (int i = 0; i < 8; i++) {
            int u = i / 2;
            a[i] = (u % 2) * 8 + 2 * (u / 2) + i % 2;
        }
        return a;
    }

    /**
     * Row {@code row} of the copy {@code w} (rows of {@code blocks} super-blocks) as floats into {@code dst[off ..]}:
     * {@code (q - 32) * (d * sc)}, the file decoder's operations, so the same bits. Pairs through the transpose above
     * with 512-bit vectors, each round a small loop over 16 vectors kept in a per-thread scratch array (L1); a row's
     * odd last super-block (and every super-block on smaller vectors) by scalar code.
     */
    static void decodeRow(MemorySegment w, int blocks, int row, float[] dst, int off) {
        long base = row * rowBytes(blocks);
        int pairs = S.length() == 32 ? blocks / 2 : 0;
        short[] t = pairs > 0 ? TRANSPOSE.get() : null;
        for (int p = 0; p < pairs; p++) {
            decodePair(w, base + (long) p * PAIR_BYTES, t, dst, off + 2 * p * Q6_KMatrix.BLOCK);
        }
        for (int b = 2 * pairs; b < blocks; b++) {
            long at = base + (long) (b / 2) * PAIR_BYTES;
            boolean tail = b >= 2 * (blocks / 2);
            int width = tail ? 16 : 32;
            int first = tail ? 0 : 16 * (b & 1);
            long scales = at + 16L * width;
            float d = w.get(FLOAT, scales + width + 4L * (first / 16));
            int e = off + b * Q6_KMatrix.BLOCK;
            for (int g = 0; g < 16; g++) {
                float ds = d * w.get(ValueLayout.JAVA_BYTE, scales + first + g);
                long q = at + first + g;
                for (int k = 0; k < 16; k++) {
                    dst[e + 16 * g + k] = w.get(ValueLayout.JAVA_BYTE, q + (long) width * k) * ds;
                }
            }
        }
    }

    /** Per thread: the transpose's two sets of 16 vectors of 32 shorts. */
    private static final ThreadLocal<short[]> TRANSPOSE = ThreadLocal.withInitial(() -> new short[2 * 16 * 32]);

    /**
     * The pair at {@code at} into {@code dst[e .. e + 512)}. Vector v of a round is {@code t[32 v ..]} (round 2 and 4
     * read what rounds 1 and 3 wrote at 0.., and write at 512..). Written as one block of straight-line code (the whole
     * transpose in registers), C1's profiled compile ran out of virtual registers ("out of virtual registers in LIR
     * generator"), the method stayed in C1's unprofiled code for seconds: 30 ns a value.
     */
    private static void decodePair(MemorySegment w, long at, short[] t, float[] dst, int e) {
        // round 1: rows 2i, 2i+1 of super-block h (lanes 16h ..) as 32-bit units: vector 8h + i
        for (int i = 0; i < 8; i++) {
            ShortVector r0 = (ShortVector) ByteVector.fromMemorySegment(B32, w, at + 64L * i, LE)
                    .convertShape(VectorOperators.B2S, S32, 0);
            ShortVector r1 = (ShortVector) ByteVector.fromMemorySegment(B32, w, at + 64L * i + 32, LE)
                    .convertShape(VectorOperators.B2S, S32, 0);
            ZIP16.selectFrom(r0, r1).intoArray(t, 32 * i);
            ZIP16.add((short) 16).selectFrom(r0, r1).intoArray(t, 32 * (8 + i));
        }
        // round 2: vector v = 8h + 4h2 + i: rows 4i .. 4i+3 of sub-blocks 8h2 .. 8h2+7 as 64-bit units
        for (int v = 0; v < 16; v++) {
            int src = (v & 8) + 2 * (v & 3);
            ZIP32.add(8 * ((v >> 2) & 1)).selectFrom(ShortVector.fromArray(S32, t, 32 * src).reinterpretAsInts(),
                    ShortVector.fromArray(S32, t, 32 * (src + 1)).reinterpretAsInts())
                    .reinterpretAsShorts().intoArray(t, 512 + 32 * v);
        }
        // round 3: vector v = 8h + 4h2 + 2i + h3: rows 8i .. 8i+7 of sub-blocks 8h2 + 4h3 .. as 128-bit units
        for (int v = 0; v < 16; v++) {
            int src = (v & 12) + 2 * ((v >> 1) & 1);
            ZIP64.add(4 * (v & 1)).selectFrom(ShortVector.fromArray(S32, t, 512 + 32 * src).reinterpretAsLongs(),
                    ShortVector.fromArray(S32, t, 512 + 32 * (src + 1)).reinterpretAsLongs())
                    .reinterpretAsShorts().intoArray(t, 32 * v);
        }
        // round 4: v = 8h + 4h2 + 2h3 + h4: sub-blocks g, g + 1 (g = 8h2 + 4h3 + 2h4) of super-block h, 16 elements each
        for (int v = 0; v < 16; v++) {
            int src = (v & 12) + ((v >> 1) & 1);
            ShortVector s = ZIP128.add(4 * (v & 1)).selectFrom(
                    ShortVector.fromArray(S32, t, 32 * src).reinterpretAsLongs(),
                    ShortVector.fromArray(S32, t, 32 * (src + 2)).reinterpretAsLongs()).reinterpretAsShorts();
            int h = v >> 3;
            int g = 2 * (v & 7);
            float d = w.get(FLOAT, at + 544 + 4L * h);
            long sc = at + 512 + 16L * h + g;
            int x = e + 256 * h + 16 * g;
            ((FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I16, 0)).convert(VectorOperators.I2F, 0))
                    .mul(d * w.get(ValueLayout.JAVA_BYTE, sc)).intoArray(dst, x);
            ((FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I16, 1)).convert(VectorOperators.I2F, 0))
                    .mul(d * w.get(ValueLayout.JAVA_BYTE, sc + 1)).intoArray(dst, x + 16);
        }
    }

    /**
     * Rounds {@code x[xOff .. xOff + cols)} to int8 by ggml's Q8_K rule (per 256 values: {@code max} the value of
     * largest magnitude, the first if tied, {@code iscale = -127 / max}, {@code q = min(127, rint(iscale * x))},
     * {@code dx = 1 / iscale}; all zero for an all-zero block) into {@code xq[qOff ..]} in {@link #lane} order
     * and {@code dx[dOff + b]}.
     */
    static void quantize(float[] x, int xOff, int cols, short[] xq, int qOff, float[] dx, int dOff) {
        int blocks = cols / 256;
        for (int b = 0; b < blocks; b++) {
            int e = xOff + 256 * b;
            float max = 0;
            float amax = 0;
            for (int j = 0; j < 256; j++) {
                float ax = Math.abs(x[e + j]);
                if (ax > amax) {
                    amax = ax;
                    max = x[e + j];
                }
            }
            float iscale = amax == 0 ? 0 : -127f / max;
            dx[dOff + b] = amax == 0 ? 0 : 1 / iscale;
            // lane(blocks, b, g, k) = base + width * k + g
            int base = lane(blocks, b, 0, 0);
            int width = b < 2 * (blocks / 2) ? 32 : 16;
            for (int g = 0; g < 16; g++) {
                for (int k = 0; k < 16; k++) {
                    xq[qOff + base + width * k + g] = (short) Math.min(127, (int) Math.rint(iscale * x[e + 16 * g + k]));
                }
            }
        }
    }

    /** Row {@code o} (its byte offset in {@code w}, {@code blocks} super-blocks) times the rounded activations. */
    static float dot(MemorySegment w, long o, int blocks, short[] xq, int qOff, float[] dx, int dOff) {
        FloatVector acc = FloatVector.zero(F);
        int pairs = blocks / 2;
        for (int p = 0; p < pairs; p++, o += PAIR_BYTES, qOff += 512) {
            for (int c = 0; c < 32; c += S.length()) {
                ShortVector s0 = ShortVector.zero(S);
                ShortVector s1 = ShortVector.zero(S);
                // elements 0..7 and 8..15 in two accumulators: 8 products of at most 32 * 127 fit 16 bits
                for (int k = 0; k < 8; k++) {
                    s0 = s0.add(((ShortVector) ByteVector.fromMemorySegment(SB, w, o + 32 * k + c, LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, xq, qOff + 32 * k + c)));
                    s1 = s1.add(((ShortVector) ByteVector.fromMemorySegment(SB, w, o + 32 * (k + 8) + c, LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, xq, qOff + 32 * (k + 8) + c)));
                }
                for (int part = 0; part < S.length() / I.length(); part++) {
                    int lane = c + part * I.length();
                    IntVector sum = ((IntVector) s0.convertShape(VectorOperators.S2I, I, part))
                            .add((IntVector) s1.convertShape(VectorOperators.S2I, I, part));
                    IntVector sc = (IntVector) ByteVector.fromMemorySegment(BI, w, o + 512 + lane, LE)
                            .convertShape(VectorOperators.B2I, I, 0);
                    float ds = w.get(FLOAT, o + 544 + 4 * (lane / 16)) * dx[dOff + 2 * p + lane / 16];
                    acc = ((FloatVector) sum.mul(sc).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.broadcast(F, ds), acc);
                }
            }
        }
        if ((blocks & 1) != 0) {
            ShortVector s0 = ShortVector.zero(S16);
            ShortVector s1 = ShortVector.zero(S16);
            for (int k = 0; k < 8; k++) {
                s0 = s0.add(((ShortVector) ByteVector.fromMemorySegment(SB16, w, o + 16 * k, LE)
                        .convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, xq, qOff + 16 * k)));
                s1 = s1.add(((ShortVector) ByteVector.fromMemorySegment(SB16, w, o + 16 * (k + 8), LE)
                        .convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, xq, qOff + 16 * (k + 8))));
            }
            float ds = w.get(FLOAT, o + 272) * dx[dOff + 2 * pairs];
            for (int part = 0; part < 16 / I.length(); part++) {
                IntVector sum = ((IntVector) s0.convertShape(VectorOperators.S2I, I, part))
                        .add((IntVector) s1.convertShape(VectorOperators.S2I, I, part));
                IntVector sc = (IntVector) ByteVector.fromMemorySegment(BI, w, o + 256 + part * I.length(), LE)
                        .convertShape(VectorOperators.B2I, I, 0);
                acc = ((FloatVector) sum.mul(sc).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.broadcast(F, ds), acc);
            }
        }
        // Simd.sum's steps written out (same order, same bits): C2 may not inline a call into this method once it is
        // inlined into the row loop, and would then box the vector passed to Simd.sum, an allocation per row
        if (F.length() >= 16) {
            acc = acc.add(acc.rearrange(Simd.SWAP8));
        }
        if (F.length() >= 8) {
            acc = acc.add(acc.rearrange(Simd.SWAP4));
        }
        acc = acc.add(acc.rearrange(Simd.SWAP2));
        return acc.add(acc.rearrange(Simd.SWAP1)).lane(0);
    }
}
