package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.K8;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q8_0: blocks of 32 values, {@code fp16 d} then 32 {@code int8 q}; value = q * d.
 * {@link #quantize} is ggml's reference quantiser ({@code quantize_row_q8_0_ref}), bit for bit.
 */
public final class Q8_0Matrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q8_0.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q8_0.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** The top byte of a 32-bit lane. */
    private static final int TOP = 0xFF000000;
    /** Per calling thread: the activations of the current matmul in the order the 8-lane kernels read them. */
    private static final Scratch.Floats INTERLEAVED = new Scratch.Floats();
    /** Whether the batched 8-lane kernels take eight tokens at a time (see {@link #group}). */
    private static final boolean GROUP8 = Boolean.parseBoolean(System.getProperty("edgelm.batch8", "true"));
    /** Whether the batched 16-lane product takes eight tokens at a time ({@link #dot16x8}); else four. */
    static final boolean EACH8 = Boolean.parseBoolean(System.getProperty("edgelm.q8.each8", "true"));

    /**
     * Whether one-token products of matrices with rows of at least {@link #TILE_MIN_COLS} values read a copy laid out in
     * tiles ({@link #tiled}); off by default ({@code -Dedgelm.q8.longtiles=true}): an experiment, the copy is made
     * beside the file's bytes (docs/lab/decode-bandwidth.md, the Zen 4 section).
     */
    static volatile boolean longTiles = Boolean.getBoolean("edgelm.q8.longtiles");
    /** Rows per tile of {@link #tiled}. */
    static final int TILE_ROWS = 16;
    /** Blocks per column chunk of {@link #tiled}: 64 blocks are 8 KiB of activations, which stay in L1. */
    static final int TILE_BLOCKS = 64;
    /** Rows this long and longer take the tiled copy when {@link #longTiles} is on. */
    static final int TILE_MIN_COLS = 4096;
    /** The tiled copy, made on the first product that uses it. */
    private volatile MemorySegment tiles;
    private final java.util.concurrent.locks.ReentrantLock tilesLock = new java.util.concurrent.locks.ReentrantLock();

    public Q8_0Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q8_0, data, rows, cols, 0);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            int e = off + b * BLOCK;
            for (int c = 0; c < BLOCK; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    ((FloatVector) q.convertShape(VectorOperators.B2F, F, p)).mul(d).intoArray(dst, e + c + p * L);
                }
            }
        }
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        if (BL == 16 && P == 1) {
            return dot16(row, x, xOff);
        }
        if (K8) {
            return dot8(row, interleave(x, xOff, cols, new float[cols], 0), 0);
        }
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < BLOCK; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    int i = xi + c + p * L;
                    s = ((FloatVector) q.convertShape(VectorOperators.B2F, F, p)).fma(FloatVector.fromArray(F, x, i), s);
                }
            }
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * The 8-lane (AVX2) one-token product: as {@link #dot8} for every row, {@code x} interleaved once per call.
     */
    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (longTiles && BL == 16 && P == 1 && in.tokens() == 1 && cols >= TILE_MIN_COLS && rows % TILE_ROWS == 0) {
            MemorySegment t = tiled();
            float[] x = in.x();
            pool.forRange(rows / TILE_ROWS, 1, (long) rows * cols, (start, end) -> {
                float[] acc = new float[16 * TILE_ROWS];
                for (int tile = start; tile < end; tile++) {
                    dot16Tile(t, tile, x, acc, out, outOff + tile * TILE_ROWS);
                }
            });
            return;
        }
        if (!K8 || in.tokens() != 1) {
            super.multiply(pool, in, out, outStride, outOff);
            return;
        }
        float[] xi = interleave(in.x(), 0, cols, INTERLEAVED.get(cols), 0);
        pool.forRange(rows, 1, (long) rows * cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out[outOff + r] = dot8(r, xi, 0);
            }
        });
    }

    /**
     * Copies {@code cols} values of {@code x} to {@code dst} in the order {@link #dot8} reads them: within each
     * block of 32, value {@code 4i + k} goes to {@code 8k + i} (the k-th byte of each of the block's eight
     * 32-bit words, see {@link #dot8}).
     */
    static float[] interleave(float[] x, int xOff, int cols, float[] dst, int dOff) {
        return interleave(x, xOff, cols, dst, dOff, BLOCK);
    }

    /** {@link #interleave(float[], int, int, float[], int)} with block b at {@code dst[dOff + b * blockStride ..]}. */
    static float[] interleave(float[] x, int xOff, int cols, float[] dst, int dOff, int blockStride) {
        for (int b = 0, d = dOff; b < cols; b += BLOCK, d += blockStride) {
            for (int k = 0; k < 4; k++) {
                for (int i = 0; i < 8; i++) {
                    dst[d + 8 * k + i] = x[xOff + b + 4 * i + k];
                }
            }
        }
        return dst;
    }

    /**
     * The 8-lane (AVX2) shape written out, over activations {@linkplain #interleave interleaved}: a block's
     * 32 bytes are one 256-bit load of eight 32-bit words, and byte k of every word is moved to the word's
     * top byte by a shift (and the bits below cleared), where the int-to-float conversion reads it as
     * {@code q * 2^24}, exactly. So one load, three shifts and three ands replace four widening loads
     * ({@code vpmovsxbd}), and the 2^24 comes off the sum at the end (a power of two: exact). Per block: the
     * four products summed in one chain, then one multiply-add with the block's scale; lanes summed by
     * {@link Simd#sum}.
     */
    private float dot8(int row, float[] xi, int xOff) {
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector s = q0.mul(FloatVector.fromArray(F, xi, e));
            s = q1.fma(FloatVector.fromArray(F, xi, e + 8), s);
            s = q2.fma(FloatVector.fromArray(F, xi, e + 16), s);
            s = q3.fma(FloatVector.fromArray(F, xi, e + 24), s);
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc) * 0x1p-24f;
    }

    /**
     * {@link #dot8} of one row with 8 inputs laid out {@linkplain #interleave token-interleaved} (block b of
     * input t at {@code xOff + (b * 8 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in
     * the same order per input, the block's load, conversions and scale shared by the 8.
     */
    private void dot8x8(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        FloatVector acc4 = FloatVector.zero(F);
        FloatVector acc5 = FloatVector.zero(F);
        FloatVector acc6 = FloatVector.zero(F);
        FloatVector acc7 = FloatVector.zero(F);
        int end = xOff + 8 * cols;
        for (int e = xOff; e < end; e += 256, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = q0.mul(FloatVector.fromArray(F, xt, e));
            s0 = q1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = q2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = q3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = q0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = q1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = q2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = q3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
            FloatVector s2 = q0.mul(FloatVector.fromArray(F, xt, e + 64));
            s2 = q1.fma(FloatVector.fromArray(F, xt, e + 72), s2);
            s2 = q2.fma(FloatVector.fromArray(F, xt, e + 80), s2);
            s2 = q3.fma(FloatVector.fromArray(F, xt, e + 88), s2);
            acc2 = s2.fma(d, acc2);
            FloatVector s3 = q0.mul(FloatVector.fromArray(F, xt, e + 96));
            s3 = q1.fma(FloatVector.fromArray(F, xt, e + 104), s3);
            s3 = q2.fma(FloatVector.fromArray(F, xt, e + 112), s3);
            s3 = q3.fma(FloatVector.fromArray(F, xt, e + 120), s3);
            acc3 = s3.fma(d, acc3);
            FloatVector s4 = q0.mul(FloatVector.fromArray(F, xt, e + 128));
            s4 = q1.fma(FloatVector.fromArray(F, xt, e + 136), s4);
            s4 = q2.fma(FloatVector.fromArray(F, xt, e + 144), s4);
            s4 = q3.fma(FloatVector.fromArray(F, xt, e + 152), s4);
            acc4 = s4.fma(d, acc4);
            FloatVector s5 = q0.mul(FloatVector.fromArray(F, xt, e + 160));
            s5 = q1.fma(FloatVector.fromArray(F, xt, e + 168), s5);
            s5 = q2.fma(FloatVector.fromArray(F, xt, e + 176), s5);
            s5 = q3.fma(FloatVector.fromArray(F, xt, e + 184), s5);
            acc5 = s5.fma(d, acc5);
            FloatVector s6 = q0.mul(FloatVector.fromArray(F, xt, e + 192));
            s6 = q1.fma(FloatVector.fromArray(F, xt, e + 200), s6);
            s6 = q2.fma(FloatVector.fromArray(F, xt, e + 208), s6);
            s6 = q3.fma(FloatVector.fromArray(F, xt, e + 216), s6);
            acc6 = s6.fma(d, acc6);
            FloatVector s7 = q0.mul(FloatVector.fromArray(F, xt, e + 224));
            s7 = q1.fma(FloatVector.fromArray(F, xt, e + 232), s7);
            s7 = q2.fma(FloatVector.fromArray(F, xt, e + 240), s7);
            s7 = q3.fma(FloatVector.fromArray(F, xt, e + 248), s7);
            acc7 = s7.fma(d, acc7);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
        acc2.intoArray(lanes, 16);
        acc3.intoArray(lanes, 24);
        acc4.intoArray(lanes, 32);
        acc5.intoArray(lanes, 40);
        acc6.intoArray(lanes, 48);
        acc7.intoArray(lanes, 56);
    }

    /**
     * {@link #dot8} of one row with 4 inputs laid out {@linkplain #interleave token-interleaved} (block b of
     * input t at {@code xOff + (b * 4 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in
     * the same order per input, the block's load, conversions and scale shared by the 4.
     */
    private void dot8x4(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int end = xOff + 4 * cols;
        for (int e = xOff; e < end; e += 128, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = q0.mul(FloatVector.fromArray(F, xt, e));
            s0 = q1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = q2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = q3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = q0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = q1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = q2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = q3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
            FloatVector s2 = q0.mul(FloatVector.fromArray(F, xt, e + 64));
            s2 = q1.fma(FloatVector.fromArray(F, xt, e + 72), s2);
            s2 = q2.fma(FloatVector.fromArray(F, xt, e + 80), s2);
            s2 = q3.fma(FloatVector.fromArray(F, xt, e + 88), s2);
            acc2 = s2.fma(d, acc2);
            FloatVector s3 = q0.mul(FloatVector.fromArray(F, xt, e + 96));
            s3 = q1.fma(FloatVector.fromArray(F, xt, e + 104), s3);
            s3 = q2.fma(FloatVector.fromArray(F, xt, e + 112), s3);
            s3 = q3.fma(FloatVector.fromArray(F, xt, e + 120), s3);
            acc3 = s3.fma(d, acc3);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
        acc2.intoArray(lanes, 16);
        acc3.intoArray(lanes, 24);
    }

    /**
     * {@link #dot8} of one row with 2 inputs laid out {@linkplain #interleave token-interleaved} (block b of
     * input t at {@code xOff + (b * 2 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in
     * the same order per input, the block's load, conversions and scale shared by the 2.
     */
    private void dot8x2(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        int end = xOff + 2 * cols;
        for (int e = xOff; e < end; e += 64, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = q0.mul(FloatVector.fromArray(F, xt, e));
            s0 = q1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = q2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = q3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = q0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = q1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = q2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = q3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
    }


    /**
     * Independent tokens on the 8-lane path: the tokens go in groups of eight, then four, two and one (n = 7 is
     * 4 + 2 + 1), each group's activations {@linkplain #interleave interleaved} once per matmul and laid out
     * block by block with the group's tokens side by side ({@link #dot8x8}), so that the kernel reads them
     * in one forward stream from one index. Per row, each group runs through one kernel that decodes each
     * block once for all its tokens; every token's result is {@link #dot8}'s, bit for bit.
     */
    private void multiplyEach8(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        int n = in.tokens();
        float[] x = in.x();
        float[] xt = INTERLEAVED.get(n * cols);
        for (int t0 = 0, g; t0 < n; t0 += g) {
            g = group(n - t0, cols);
            for (int i = 0; i < g; i++) {
                interleave(x, (t0 + i) * cols, cols, xt, t0 * cols + i * BLOCK, g * BLOCK);
            }
        }
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            float[] lanes = new float[8 * L];
            for (int r = start; r < end; r++) {
                for (int t0 = 0, g; t0 < n; t0 += g) {
                    g = group(n - t0, cols);
                    int at = t0 * outStride + outOff + r;
                    switch (g) {
                        case 8 -> dot8x8(r, xt, t0 * cols, lanes);
                        case 4 -> dot8x4(r, xt, t0 * cols, lanes);
                        case 2 -> dot8x2(r, xt, t0 * cols, lanes);
                        default -> {
                            out[at] = dot8(r, xt, t0 * cols);
                            continue;
                        }
                    }
                    for (int i = 0; i < g; i++) {
                        out[at + i * outStride] = Simd.sum8(lanes, 8 * i) * 0x1p-24f;
                    }
                }
            }
        });
    }

    /**
     * The size of the next group of the batched 8-lane kernels when {@code left} tokens of {@code cols} values
     * remain: 8, 4, 2 or 1. Eight only for rows of up to 1024 values: eight such tokens are 32 KiB, L1's size;
     * on longer rows the eight-token pass measured slower than two of four (BatchedMatVecBenchmark, 1024 x 3584:
     * -14 %). {@code -Dedgelm.batch8=false} caps it at 4 everywhere, to measure one against the other.
     */
    static int group(int left, int cols) {
        return left >= 8 && GROUP8 && cols <= 1024 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    }

    /**
     * The 16-lane (AVX-512) shape written out: a block is two 16-byte loads, no inner loops; per block
     * {@code s = q_hi * x_hi + q_lo * x_lo}, then {@code acc += s * d}.
     */
    private float dot16(int row, float[] x, int xOff) {
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * A copy of the matrix in tiles of {@link #TILE_ROWS} rows, each tile's bytes column chunk by column chunk: chunk
     * c (blocks {@code c * TILE_BLOCKS ..}, fewer in the last) of the tile's row j at {@code tile + c * TILE_ROWS *
     * TILE_BLOCKS * 34 + j * k * 34} where k is the chunk's blocks. A pass over a tile reads it as one forward stream.
     */
    private MemorySegment tiled() {
        MemorySegment t = tiles;
        if (t != null) {
            return t;
        }
        tilesLock.lock();
        try {
            if (tiles == null) {
                MemorySegment c = dev.edgelm.format.ModelMemory.workingCopy(rows * rowBytes, java.lang.foreign.Arena.ofAuto());
                for (int t0 = 0; t0 < rows; t0 += TILE_ROWS) {
                    long tile = t0 * rowBytes;
                    for (int b0 = 0; b0 < blocksPerRow; b0 += TILE_BLOCKS) {
                        int k = Math.min(TILE_BLOCKS, blocksPerRow - b0);
                        for (int j = 0; j < TILE_ROWS; j++) {
                            MemorySegment.copy(data, (t0 + j) * rowBytes + (long) b0 * BLOCK_BYTES, c,
                                    tile + ((long) b0 * TILE_ROWS + (long) j * k) * BLOCK_BYTES, (long) k * BLOCK_BYTES);
                        }
                    }
                }
                tiles = c;
            }
            return tiles;
        } finally {
            tilesLock.unlock();
        }
    }

    /**
     * {@link #dot16} of the {@link #TILE_ROWS} rows of tile {@code tile} of the {@linkplain #tiled tiled copy} into
     * {@code out[outOff ..]}: column chunk by column chunk, each row's accumulator carried through {@code acc} from one
     * chunk to the next, so each row sees {@link #dot16}'s operations in its order (the same bits), while a chunk's
     * activations stay in L1 for the tile's rows.
     */
    private void dot16Tile(MemorySegment t, int tile, float[] x, float[] acc, float[] out, int outOff) {
        java.util.Arrays.fill(acc, 0f);
        long base = tile * TILE_ROWS * rowBytes;
        for (int b0 = 0; b0 < blocksPerRow; b0 += TILE_BLOCKS) {
            int k = Math.min(TILE_BLOCKS, blocksPerRow - b0);
            long chunk = base + (long) b0 * TILE_ROWS * BLOCK_BYTES;
            for (int j = 0; j < TILE_ROWS; j++) {
                dot16Chunk(t, chunk + (long) j * k * BLOCK_BYTES, k, x, b0 * BLOCK, acc, 16 * j);
            }
        }
        for (int j = 0; j < TILE_ROWS; j++) {
            out[outOff + j] = Simd.sum(FloatVector.fromArray(F, acc, 16 * j));
        }
    }

    /** {@link #dot16}'s loop over {@code k} blocks at {@code t[o ..]} against {@code x[xOff ..]}, continuing {@code acc[ao ..]}. */
    private static void dot16Chunk(MemorySegment t, long o, int k, float[] x, int xOff, float[] accs, int ao) {
        FloatVector acc = FloatVector.fromArray(F, accs, ao);
        for (int b = 0; b < k; b++, o += BLOCK_BYTES) {
            int xi = xOff + b * BLOCK;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, t, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, t, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(t, o)), acc);
        }
        acc.intoArray(accs, ao);
    }

    /**
     * Independent tokens (batched decode): eight tokens at a time share each block's loads, conversions and
     * scale ({@link #dot16x8}), then four ({@link #dot16x4}), the rest go one by one; every token's result is
     * {@link #dot16}'s, bit for bit. A group short of a few tokens is padded with zero activations, whose
     * results are dropped ({@link #group16}); rows go two at a time through {@link #dot16x8x2} /
     * {@link #dot16x4x2}, which share each activation load between the two rows.
     */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (K8) {
            multiplyEach8(pool, in, out, outStride, outOff);
            return;
        }
        if (BL != 16 || P != 1) {
            super.multiplyEach(pool, in, out, outStride, outOff);
            return;
        }
        int n = in.tokens();
        float[] x = in.x();
        // Groups: [t, t + g) padded to g = group16(n - t) tokens, of which real(t, g) are tokens of the batch.
        int padded = 0; // tokens laid out side by side, padding included
        int last = 0;   // first token left to the one-token kernel
        while (last < n) {
            int g = group16(n - last);
            if (g == 1) {
                break;
            }
            padded += g;
            last = Math.min(n, last + g);
        }
        int ones = last;
        float[] xt = INTERLEAVED.get(Math.max(1, padded) * cols);
        for (int t = 0, at = 0; t < ones; ) {
            int g = group16(n - t);
            int real = Math.min(g, n - t);
            sideBySide(x, t, real, g, at, cols, xt);
            t += real;
            at += g;
        }
        pool.forRange(rows, 2, (long) rows * cols * Math.max(n, padded), (start, end) -> {
            float[] lanes = new float[8 * L];
            float[] lanes2 = new float[8 * L];
            int r = start;
            for (; r + 1 < end; r += 2) {
                for (int t = 0, at = 0; t < ones; ) {
                    int g = group16(n - t);
                    int real = Math.min(g, n - t);
                    if (g == 8) {
                        dot16x8x2(r, xt, at * cols, lanes, lanes2);
                    } else {
                        dot16x4x2(r, xt, at * cols, lanes, lanes2);
                    }
                    sums(lanes, g);
                    sums(lanes2, g);
                    for (int i = 0; i < real; i++) {
                        int lane = SUM_LANE[g == 8 ? i : 8 + i];
                        out[(t + i) * outStride + outOff + r] = lanes[lane];
                        out[(t + i) * outStride + outOff + r + 1] = lanes2[lane];
                    }
                    t += real;
                    at += g;
                }
                for (int t = ones; t < n; t++) {
                    out[t * outStride + outOff + r] = dot16(r, x, t * cols);
                    out[t * outStride + outOff + r + 1] = dot16(r + 1, x, t * cols);
                }
            }
            for (; r < end; r++) {
                for (int t = 0, at = 0; t < ones; ) {
                    int g = group16(n - t);
                    int real = Math.min(g, n - t);
                    if (g == 8) {
                        dot16x8(r, xt, at * cols, lanes);
                    } else {
                        dot16x4(r, xt, at * cols, lanes);
                    }
                    sums(lanes, g);
                    for (int i = 0; i < real; i++) {
                        out[(t + i) * outStride + outOff + r] = lanes[SUM_LANE[g == 8 ? i : 8 + i]];
                    }
                    t += real;
                    at += g;
                }
                for (int t = ones; t < n; t++) {
                    out[t * outStride + outOff + r] = dot16(r, x, t * cols);
                }
            }
        });
    }

    /**
     * The size of the next group of the batched 16-lane kernels when {@code left} tokens remain: 8 from six
     * tokens on, 4 from three on (groups of 6, 7 or 3 padded with zero tokens), else 1 (the one-token kernel).
     * A padded pass costs the full group's work; per block an eight-token pass measured ~28 cycles, a
     * four-token pass ~17 and a one-token product on a row already in L1 ~6 (BatchedCpuTime, 3584 x 1024), so
     * padding pays from 6 of 8 and 3 of 4 on. {@code -Dedgelm.q8.each8=false}: groups of at most four.
     */
    static int group16(int left) {
        if (left >= (EACH8 ? 6 : 4) && EACH8) {
            return 8;
        }
        return left >= 3 ? 4 : 1;
    }

    /**
     * Copies tokens {@code t0 .. t0+g)} of {@code x} (rows of {@code cols}) to {@code dst} from {@code t0 * cols}
     * on, block by block with the g tokens side by side: block b of token t0 + i at {@code t0 * cols + (b * g + i)
     * * 32}. The batched kernels read one forward stream from one index; tokens {@code cols} floats apart (4 KiB
     * at 1024 columns) would put all their loads of a block in the same L1 sets.
     */
    static void sideBySide(float[] x, int t0, int g, int cols, float[] dst) {
        sideBySide(x, t0, g, g, t0, cols, dst);
    }

    /**
     * As {@link #sideBySide(float[], int, int, int, float[])} for {@code real} tokens from {@code t0} in a group of
     * {@code g} slots laid out from slot {@code at} ({@code dst[at * cols ..]}); slots {@code real .. g} are zeros.
     */
    static void sideBySide(float[] x, int t0, int real, int g, int at, int cols, float[] dst) {
        int base = at * cols;
        for (int i = 0; i < g; i++) {
            int from = (t0 + i) * cols;
            for (int b = 0, d = base + i * BLOCK; b < cols; b += BLOCK, d += g * BLOCK) {
                if (i < real) {
                    System.arraycopy(x, from + b, dst, d, BLOCK);
                } else {
                    java.util.Arrays.fill(dst, d, d + BLOCK, 0f);
                }
            }
        }
    }

    private static final VectorMask<Float> M8 = L == 16 ? VectorMask.fromLong(F, 0xFF00) : null;
    private static final VectorMask<Float> M4 = L == 16 ? VectorMask.fromLong(F, 0xF0F0) : null;
    private static final VectorMask<Float> M2 = L == 16 ? VectorMask.fromLong(F, 0xCCCC) : null;
    /** Where {@link #sums} leaves token i's sum: {@code [i]} of eight tokens, {@code [8 + i]} of four. */
    private static final int[] SUM_LANE = {0, 8, 4, 12, 2, 10, 6, 14, 0, 8, 4, 12};

    /**
     * {@link Simd#sum} of each of the {@code g} (4 or 8) accumulators at {@code lanes[16t ..]}, in its order (so the
     * same bits), all at once: each of Simd.sum's steps adds lane {@code i ^ k} to lane i, after which half the
     * lanes repeat the other half, so two tokens' vectors are blended into one before the next step (token t's
     * lanes keep their places within the vector, the additions are the same ones, only commuted). The sums land
     * in {@code lanes[SUM_LANE[..]]}: 8 tokens' 16 vector additions and 7 blends instead of 120 scalar additions.
     */
    static void sums(float[] lanes, int g) {
        FloatVector c01 = step(lanes, 0).blend(step(lanes, 16), M8);
        FloatVector c23 = step(lanes, 32).blend(step(lanes, 48), M8);
        FloatVector d0 = c01.add(c01.rearrange(Simd.SWAP4)).blend(c23.add(c23.rearrange(Simd.SWAP4)), M4);
        if (g == 8) {
            FloatVector c45 = step(lanes, 64).blend(step(lanes, 80), M8);
            FloatVector c67 = step(lanes, 96).blend(step(lanes, 112), M8);
            FloatVector d1 = c45.add(c45.rearrange(Simd.SWAP4)).blend(c67.add(c67.rearrange(Simd.SWAP4)), M4);
            d0 = d0.add(d0.rearrange(Simd.SWAP2)).blend(d1.add(d1.rearrange(Simd.SWAP2)), M2);
        } else {
            d0 = d0.add(d0.rearrange(Simd.SWAP2));
        }
        d0.add(d0.rearrange(Simd.SWAP1)).intoArray(lanes, 0);
    }

    /** The first step of {@link Simd#sum} on the accumulator at {@code lanes[off ..]}. */
    private static FloatVector step(float[] lanes, int off) {
        FloatVector v = FloatVector.fromArray(F, lanes, off);
        return v.add(v.rearrange(Simd.SWAP8));
    }

    /**
     * {@link #dot16} of one row with four inputs {@linkplain #sideBySide side by side} from {@code xt[xOff]}, the
     * final accumulators into {@code lanes[16t ..]}: the same operations in the same order per input, each block's
     * loads, conversions and scale shared.
     */
    private void dot16x4(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int end = xOff + 4 * cols;
        for (int xi = xOff; xi < end; xi += 128, o += BLOCK_BYTES) {
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = hi.fma(FloatVector.fromArray(F, xt, xi + 16), lo.mul(FloatVector.fromArray(F, xt, xi)));
            FloatVector s1 = hi.fma(FloatVector.fromArray(F, xt, xi + 48), lo.mul(FloatVector.fromArray(F, xt, xi + 32)));
            FloatVector s2 = hi.fma(FloatVector.fromArray(F, xt, xi + 80), lo.mul(FloatVector.fromArray(F, xt, xi + 64)));
            FloatVector s3 = hi.fma(FloatVector.fromArray(F, xt, xi + 112), lo.mul(FloatVector.fromArray(F, xt, xi + 96)));
            acc0 = s0.fma(d, acc0);
            acc1 = s1.fma(d, acc1);
            acc2 = s2.fma(d, acc2);
            acc3 = s3.fma(d, acc3);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 16);
        acc2.intoArray(lanes, 32);
        acc3.intoArray(lanes, 48);
    }

    /**
     * {@link #dot16x4} for eight inputs: per block two conversions and a scale for 8 tokens, 24 multiplies and
     * multiply-adds; 8 accumulators, the two converted halves and the scale in registers (AVX-512 has 32).
     */
    private void dot16x8(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        FloatVector acc4 = FloatVector.zero(F);
        FloatVector acc5 = FloatVector.zero(F);
        FloatVector acc6 = FloatVector.zero(F);
        FloatVector acc7 = FloatVector.zero(F);
        int end = xOff + 8 * cols;
        for (int xi = xOff; xi < end; xi += 256, o += BLOCK_BYTES) {
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            acc0 = hi.fma(FloatVector.fromArray(F, xt, xi + 16), lo.mul(FloatVector.fromArray(F, xt, xi))).fma(d, acc0);
            acc1 = hi.fma(FloatVector.fromArray(F, xt, xi + 48), lo.mul(FloatVector.fromArray(F, xt, xi + 32))).fma(d, acc1);
            acc2 = hi.fma(FloatVector.fromArray(F, xt, xi + 80), lo.mul(FloatVector.fromArray(F, xt, xi + 64))).fma(d, acc2);
            acc3 = hi.fma(FloatVector.fromArray(F, xt, xi + 112), lo.mul(FloatVector.fromArray(F, xt, xi + 96))).fma(d, acc3);
            acc4 = hi.fma(FloatVector.fromArray(F, xt, xi + 144), lo.mul(FloatVector.fromArray(F, xt, xi + 128))).fma(d, acc4);
            acc5 = hi.fma(FloatVector.fromArray(F, xt, xi + 176), lo.mul(FloatVector.fromArray(F, xt, xi + 160))).fma(d, acc5);
            acc6 = hi.fma(FloatVector.fromArray(F, xt, xi + 208), lo.mul(FloatVector.fromArray(F, xt, xi + 192))).fma(d, acc6);
            acc7 = hi.fma(FloatVector.fromArray(F, xt, xi + 240), lo.mul(FloatVector.fromArray(F, xt, xi + 224))).fma(d, acc7);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 16);
        acc2.intoArray(lanes, 32);
        acc3.intoArray(lanes, 48);
        acc4.intoArray(lanes, 64);
        acc5.intoArray(lanes, 80);
        acc6.intoArray(lanes, 96);
        acc7.intoArray(lanes, 112);
    }

    /**
     * {@link #dot16x4} of rows {@code row} and {@code row + 1} at once, accumulators into {@code lanes} and
     * {@code lanes2}: each activation vector loaded once for both rows; per row and token the same operations in the
     * same order as {@link #dot16}. 8 accumulators, four converted halves, two scales and two activation vectors
     * in registers (AVX-512 has 32).
     */
    private void dot16x4x2(int row, float[] xt, int xOff, float[] lanes, float[] lanes2) {
        long o = row * rowBytes;
        long p = o + rowBytes;
        FloatVector a0 = FloatVector.zero(F);
        FloatVector b0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F);
        FloatVector b1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F);
        FloatVector b2 = FloatVector.zero(F);
        FloatVector a3 = FloatVector.zero(F);
        FloatVector b3 = FloatVector.zero(F);
        int end = xOff + 4 * cols;
        for (int xi = xOff; xi < end; xi += 128, o += BLOCK_BYTES, p += BLOCK_BYTES) {
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector lo2 = (FloatVector) ByteVector.fromMemorySegment(B, data, p + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi2 = (FloatVector) ByteVector.fromMemorySegment(B, data, p + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d2 = FloatVector.broadcast(F, Simd.fp16(data, p));
            FloatVector xl0 = FloatVector.fromArray(F, xt, xi + 0);
            FloatVector xh0 = FloatVector.fromArray(F, xt, xi + 16);
            a0 = hi.fma(xh0, lo.mul(xl0)).fma(d, a0);
            b0 = hi2.fma(xh0, lo2.mul(xl0)).fma(d2, b0);
            FloatVector xl1 = FloatVector.fromArray(F, xt, xi + 32);
            FloatVector xh1 = FloatVector.fromArray(F, xt, xi + 48);
            a1 = hi.fma(xh1, lo.mul(xl1)).fma(d, a1);
            b1 = hi2.fma(xh1, lo2.mul(xl1)).fma(d2, b1);
            FloatVector xl2 = FloatVector.fromArray(F, xt, xi + 64);
            FloatVector xh2 = FloatVector.fromArray(F, xt, xi + 80);
            a2 = hi.fma(xh2, lo.mul(xl2)).fma(d, a2);
            b2 = hi2.fma(xh2, lo2.mul(xl2)).fma(d2, b2);
            FloatVector xl3 = FloatVector.fromArray(F, xt, xi + 96);
            FloatVector xh3 = FloatVector.fromArray(F, xt, xi + 112);
            a3 = hi.fma(xh3, lo.mul(xl3)).fma(d, a3);
            b3 = hi2.fma(xh3, lo2.mul(xl3)).fma(d2, b3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, 16);
        a2.intoArray(lanes, 32);
        a3.intoArray(lanes, 48);
        b0.intoArray(lanes2, 0);
        b1.intoArray(lanes2, 16);
        b2.intoArray(lanes2, 32);
        b3.intoArray(lanes2, 48);
    }

    /**
     * {@link #dot16x8} of rows {@code row} and {@code row + 1} at once, accumulators into {@code lanes} and
     * {@code lanes2}: each activation vector loaded once for both rows; per row and token the same operations in the
     * same order as {@link #dot16}. 16 accumulators, four converted halves, two scales and two activation vectors
     * in registers (AVX-512 has 32).
     */
    private void dot16x8x2(int row, float[] xt, int xOff, float[] lanes, float[] lanes2) {
        long o = row * rowBytes;
        long p = o + rowBytes;
        FloatVector a0 = FloatVector.zero(F);
        FloatVector b0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F);
        FloatVector b1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F);
        FloatVector b2 = FloatVector.zero(F);
        FloatVector a3 = FloatVector.zero(F);
        FloatVector b3 = FloatVector.zero(F);
        FloatVector a4 = FloatVector.zero(F);
        FloatVector b4 = FloatVector.zero(F);
        FloatVector a5 = FloatVector.zero(F);
        FloatVector b5 = FloatVector.zero(F);
        FloatVector a6 = FloatVector.zero(F);
        FloatVector b6 = FloatVector.zero(F);
        FloatVector a7 = FloatVector.zero(F);
        FloatVector b7 = FloatVector.zero(F);
        int end = xOff + 8 * cols;
        for (int xi = xOff; xi < end; xi += 256, o += BLOCK_BYTES, p += BLOCK_BYTES) {
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector lo2 = (FloatVector) ByteVector.fromMemorySegment(B, data, p + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi2 = (FloatVector) ByteVector.fromMemorySegment(B, data, p + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d2 = FloatVector.broadcast(F, Simd.fp16(data, p));
            FloatVector xl0 = FloatVector.fromArray(F, xt, xi + 0);
            FloatVector xh0 = FloatVector.fromArray(F, xt, xi + 16);
            a0 = hi.fma(xh0, lo.mul(xl0)).fma(d, a0);
            b0 = hi2.fma(xh0, lo2.mul(xl0)).fma(d2, b0);
            FloatVector xl1 = FloatVector.fromArray(F, xt, xi + 32);
            FloatVector xh1 = FloatVector.fromArray(F, xt, xi + 48);
            a1 = hi.fma(xh1, lo.mul(xl1)).fma(d, a1);
            b1 = hi2.fma(xh1, lo2.mul(xl1)).fma(d2, b1);
            FloatVector xl2 = FloatVector.fromArray(F, xt, xi + 64);
            FloatVector xh2 = FloatVector.fromArray(F, xt, xi + 80);
            a2 = hi.fma(xh2, lo.mul(xl2)).fma(d, a2);
            b2 = hi2.fma(xh2, lo2.mul(xl2)).fma(d2, b2);
            FloatVector xl3 = FloatVector.fromArray(F, xt, xi + 96);
            FloatVector xh3 = FloatVector.fromArray(F, xt, xi + 112);
            a3 = hi.fma(xh3, lo.mul(xl3)).fma(d, a3);
            b3 = hi2.fma(xh3, lo2.mul(xl3)).fma(d2, b3);
            FloatVector xl4 = FloatVector.fromArray(F, xt, xi + 128);
            FloatVector xh4 = FloatVector.fromArray(F, xt, xi + 144);
            a4 = hi.fma(xh4, lo.mul(xl4)).fma(d, a4);
            b4 = hi2.fma(xh4, lo2.mul(xl4)).fma(d2, b4);
            FloatVector xl5 = FloatVector.fromArray(F, xt, xi + 160);
            FloatVector xh5 = FloatVector.fromArray(F, xt, xi + 176);
            a5 = hi.fma(xh5, lo.mul(xl5)).fma(d, a5);
            b5 = hi2.fma(xh5, lo2.mul(xl5)).fma(d2, b5);
            FloatVector xl6 = FloatVector.fromArray(F, xt, xi + 192);
            FloatVector xh6 = FloatVector.fromArray(F, xt, xi + 208);
            a6 = hi.fma(xh6, lo.mul(xl6)).fma(d, a6);
            b6 = hi2.fma(xh6, lo2.mul(xl6)).fma(d2, b6);
            FloatVector xl7 = FloatVector.fromArray(F, xt, xi + 224);
            FloatVector xh7 = FloatVector.fromArray(F, xt, xi + 240);
            a7 = hi.fma(xh7, lo.mul(xl7)).fma(d, a7);
            b7 = hi2.fma(xh7, lo2.mul(xl7)).fma(d2, b7);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, 16);
        a2.intoArray(lanes, 32);
        a3.intoArray(lanes, 48);
        a4.intoArray(lanes, 64);
        a5.intoArray(lanes, 80);
        a6.intoArray(lanes, 96);
        a7.intoArray(lanes, 112);
        b0.intoArray(lanes2, 0);
        b1.intoArray(lanes2, 16);
        b2.intoArray(lanes2, 32);
        b3.intoArray(lanes2, 48);
        b4.intoArray(lanes2, 64);
        b5.intoArray(lanes2, 80);
        b6.intoArray(lanes2, 96);
        b7.intoArray(lanes2, 112);
    }

    /**
     * Quantises {@code src[srcOff .. srcOff+count)} into {@code count / 32} Q8_0 blocks at {@code dst[dstOff..]},
     * exactly as ggml's {@code quantize_row_q8_0_ref}: {@code d = amax / 127}, {@code q = roundf(x / d)}
     * (computed as {@code x * (1/d)}, halves away from zero), {@code d} stored as fp16 rounded to nearest even.
     */
    public static void quantize(float[] src, int srcOff, int count, MemorySegment dst, long dstOff) {
        if (count % BLOCK != 0) {
            throw new IllegalArgumentException("Q8_0 quantises whole blocks of " + BLOCK + " values, got " + count);
        }
        for (int b = 0; b < count / BLOCK; b++) {
            int s = srcOff + b * BLOCK;
            long o = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0f;
            for (int j = 0; j < BLOCK; j++) {
                amax = Math.max(amax, Math.abs(src[s + j]));
            }
            float d = amax / 127;
            float id = d != 0f ? 1f / d : 0f;
            dst.set(Simd.LE_SHORT, o, Float.floatToFloat16(d));
            for (int j = 0; j < BLOCK; j++) {
                dst.set(ValueLayout.JAVA_BYTE, o + 2 + j, (byte) Quantizing.roundHalfAway(src[s + j] * id));
            }
        }
    }
}
