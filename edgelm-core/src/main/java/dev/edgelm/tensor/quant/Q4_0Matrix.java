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
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q4_0: blocks of 32 values, {@code fp16 d} then 16 bytes; byte j holds value j in its low nibble and
 * value j + 16 in its high nibble; value = (nibble - 8) * d. {@link #quantize} is ggml's reference
 * quantiser ({@code quantize_row_q4_0_ref}), bit for bit.
 */
public final class Q4_0Matrix extends QuantizedMatrix implements Int8Gemm.Int8Rows {
    static final int BLOCK = GgmlType.Q4_0.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q4_0.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** Per calling thread: the activations of the current batched matmul, laid out for the many-token kernels. */
    private static final Scratch.Floats SIDE_BY_SIDE = new Scratch.Floats();

    /**
     * Whether one-token products (decode) and independent tokens (batched decode) round the activation to int8
     * per block and multiply in 16-bit lanes over a repacked copy of the matrix ({@link Q4Lanes}; default on:
     * 1.8x the float kernel's rate streamed from memory with AVX-512 and 3.5x with AVX2, on one thread, see
     * docs/kernels.md). {@code -Dedgelm.q4.intdecode=false} keeps the float kernels (to measure one against the other).
     */
    static final boolean INT_DECODE = Boolean.parseBoolean(System.getProperty("edgelm.q4.intdecode", "true"));
    /** Per thread: the rounded activations of the current decode products, one per token. */
    private static final ThreadLocal<Q4Lanes.Input[]> ROUNDED = ThreadLocal.withInitial(() -> new Q4Lanes.Input[0]);

    /** The repacked copy for integer decode, made on the first one-token product. */
    private volatile Q4Lanes lanes;

    public Q4_0Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_0, data, rows, cols, 0);
    }

    /** The repacked copy ({@link Q4Lanes}), made now (on {@code pool}'s threads, or this one if null) if not yet. */
    Q4Lanes lanes(Parallel pool) {
        Q4Lanes l = lanes;
        if (l == null) {
            synchronized (this) {
                l = lanes;
                if (l == null) {
                    lanes = l = Q4Lanes.of(data, rows, cols, pool);
                }
            }
        }
        return l;
    }

    /** Bytes of the repacked copy once decode has run (0 before, or with integer decode off). */
    public long repackedBytes() {
        return lanes == null ? 0 : Q4Lanes.byteSize(rows, cols);
    }

    /** Per thread, {@code n} rounded-activation holders fit for this matrix's width. */
    private Q4Lanes.Input[] rounded(int n) {
        Q4Lanes.Input[] a = ROUNDED.get();
        if (a.length < n) {
            a = java.util.Arrays.copyOf(a, n);
            ROUNDED.set(a);
        }
        for (int t = 0; t < n; t++) {
            if (a[t] == null || !a[t].fits(cols)) {
                a[t] = Q4Lanes.Input.allocate(cols);
            }
        }
        return a;
    }

    /** Decode on {@link Q4Lanes}: every token rounded once, then per row each token through the one kernel. */
    private void multiplyLanes(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        Q4Lanes l = lanes(pool);
        int n = in.tokens();
        float[] x = in.x();
        Q4Lanes.Input[] xs = rounded(n);
        for (int t = 0; t < n; t++) {
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

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            int e = off + b * BLOCK;
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    ((FloatVector) w.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).mul(d)
                            .intoArray(dst, e + c + p * L);
                    ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                            .mul(d).intoArray(dst, e + 16 + c + p * L);
                }
            }
        }
    }

    /**
     * Decodes row {@code row} to its Q4_0 values as shorts ({@code nibble - 8}, in [-8, 7]) at
     * {@code dst[off..]} and its block scales to {@code scales[sOff..]}, for {@link Q4_0Gemm}.
     */
    void decodeShorts(int row, short[] dst, int off, float[] scales, int sOff) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            scales[sOff + b] = Simd.fp16(data, o);
            ShortVector w = (ShortVector) ByteVector.fromMemorySegment(ByteVector.SPECIES_128, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2S, ShortVector.SPECIES_256, 0);
            int e = off + b * BLOCK;
            w.and((short) 0x0F).sub((short) 8).intoArray(dst, e);
            w.lanewise(VectorOperators.LSHR, 4).sub((short) 8).intoArray(dst, e + 16);
        }
    }

    /** {@link Int8Gemm}'s form of a row: {@link #decodeShorts} (Q4_0 blocks have no bias). */
    @Override
    public void decodeInts(int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        decodeShorts(row, q, off, scale, sOff);
    }

    @Override
    public boolean biased() {
        return false;
    }

    /**
     * Whether prefill (chunks of 16 tokens or more) rounds the activations to int8 blocks as llama.cpp does
     * ({@link Q4_0Gemm} with 16-lane vectors, {@link Int8Gemm} with 8 lanes); decode and shorter chunks always
     * multiply float activations.
     */
    public static boolean roundsPrefillActivations() {
        return Q4_0Gemm.ENABLED || Int8Gemm.ENABLED;
    }

    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE && in.tokens() == 1) {
            multiplyLanes(pool, in, out, outStride, outOff);
            return;
        }
        if (Int8Gemm.takes(in.tokens())) {
            Int8Gemm.matmul(this, pool, in, out, outStride, outOff);
            return;
        }
        if (Q4_0Gemm.takes(in.tokens())) {
            Q4_0Gemm.matmul(this, pool, in, out, outStride, outOff);
            return;
        }
        super.multiply(pool, in, out, outStride, outOff);
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        if (INT_DECODE) {
            // dotRow: the decode products' arithmetic (rounded activation, integer sums), so that it agrees with them
            return lanes(null).dot(row, rounded(1)[0].round(x, xOff, cols));
        }
        return dotFloat(row, x, xOff);
    }

    /** The float kernel: the weights converted to float, float activations. */
    float dotFloat(int row, float[] x, int xOff) {
        if (K8) {
            return dot8(row, x, xOff);
        }
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    FloatVector lo = (FloatVector) w.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
                    FloatVector hi = (FloatVector) w.lanewise(VectorOperators.LSHR, 4).sub(8)
                            .convertShape(VectorOperators.I2F, F, 0);
                    int i = xi + c + p * L;
                    s = lo.fma(FloatVector.fromArray(F, x, i), s);
                    s = hi.fma(FloatVector.fromArray(F, x, i + 16), s);
                }
            }
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * The 8-lane (AVX2) shape written out: a block is two 8-byte loads widened to int lanes (values 0..7 and
     * 8..15 in the low nibbles, 16..23 and 24..31 in the high ones), the four products summed in one chain,
     * then one multiply-add with the block's scale; lanes summed by {@link Simd#sum}.
     */
    private float dot8(int row, float[] x, int xOff) {
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            IntVector a = (IntVector) ByteVector.fromMemorySegment(B, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector b = (IntVector) ByteVector.fromMemorySegment(B, data, o + 10, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            FloatVector s = ((FloatVector) a.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, e));
            s = ((FloatVector) b.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, e + 8), s);
            s = ((FloatVector) a.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                    .fma(FloatVector.fromArray(F, x, e + 16), s);
            s = ((FloatVector) b.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                    .fma(FloatVector.fromArray(F, x, e + 24), s);
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * {@link #dot8} of one row with 8 inputs laid out token-interleaved (block b of input t at
     * {@code xOff + (b * 8 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in the same
     * order per input, the block's loads, conversions and scale shared by the 8.
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
            IntVector a = (IntVector) ByteVector.fromMemorySegment(B, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector b = (IntVector) ByteVector.fromMemorySegment(B, data, o + 10, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            FloatVector v0 = (FloatVector) a.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v1 = (FloatVector) b.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v2 = (FloatVector) a.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v3 = (FloatVector) b.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = v0.mul(FloatVector.fromArray(F, xt, e));
            s0 = v1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = v2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = v3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = v0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = v1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = v2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = v3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
            FloatVector s2 = v0.mul(FloatVector.fromArray(F, xt, e + 64));
            s2 = v1.fma(FloatVector.fromArray(F, xt, e + 72), s2);
            s2 = v2.fma(FloatVector.fromArray(F, xt, e + 80), s2);
            s2 = v3.fma(FloatVector.fromArray(F, xt, e + 88), s2);
            acc2 = s2.fma(d, acc2);
            FloatVector s3 = v0.mul(FloatVector.fromArray(F, xt, e + 96));
            s3 = v1.fma(FloatVector.fromArray(F, xt, e + 104), s3);
            s3 = v2.fma(FloatVector.fromArray(F, xt, e + 112), s3);
            s3 = v3.fma(FloatVector.fromArray(F, xt, e + 120), s3);
            acc3 = s3.fma(d, acc3);
            FloatVector s4 = v0.mul(FloatVector.fromArray(F, xt, e + 128));
            s4 = v1.fma(FloatVector.fromArray(F, xt, e + 136), s4);
            s4 = v2.fma(FloatVector.fromArray(F, xt, e + 144), s4);
            s4 = v3.fma(FloatVector.fromArray(F, xt, e + 152), s4);
            acc4 = s4.fma(d, acc4);
            FloatVector s5 = v0.mul(FloatVector.fromArray(F, xt, e + 160));
            s5 = v1.fma(FloatVector.fromArray(F, xt, e + 168), s5);
            s5 = v2.fma(FloatVector.fromArray(F, xt, e + 176), s5);
            s5 = v3.fma(FloatVector.fromArray(F, xt, e + 184), s5);
            acc5 = s5.fma(d, acc5);
            FloatVector s6 = v0.mul(FloatVector.fromArray(F, xt, e + 192));
            s6 = v1.fma(FloatVector.fromArray(F, xt, e + 200), s6);
            s6 = v2.fma(FloatVector.fromArray(F, xt, e + 208), s6);
            s6 = v3.fma(FloatVector.fromArray(F, xt, e + 216), s6);
            acc6 = s6.fma(d, acc6);
            FloatVector s7 = v0.mul(FloatVector.fromArray(F, xt, e + 224));
            s7 = v1.fma(FloatVector.fromArray(F, xt, e + 232), s7);
            s7 = v2.fma(FloatVector.fromArray(F, xt, e + 240), s7);
            s7 = v3.fma(FloatVector.fromArray(F, xt, e + 248), s7);
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
     * {@link #dot8} of one row with 4 inputs laid out token-interleaved (block b of input t at
     * {@code xOff + (b * 4 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in the same
     * order per input, the block's loads, conversions and scale shared by the 4.
     */
    private void dot8x4(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int end = xOff + 4 * cols;
        for (int e = xOff; e < end; e += 128, o += BLOCK_BYTES) {
            IntVector a = (IntVector) ByteVector.fromMemorySegment(B, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector b = (IntVector) ByteVector.fromMemorySegment(B, data, o + 10, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            FloatVector v0 = (FloatVector) a.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v1 = (FloatVector) b.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v2 = (FloatVector) a.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v3 = (FloatVector) b.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = v0.mul(FloatVector.fromArray(F, xt, e));
            s0 = v1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = v2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = v3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = v0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = v1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = v2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = v3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
            FloatVector s2 = v0.mul(FloatVector.fromArray(F, xt, e + 64));
            s2 = v1.fma(FloatVector.fromArray(F, xt, e + 72), s2);
            s2 = v2.fma(FloatVector.fromArray(F, xt, e + 80), s2);
            s2 = v3.fma(FloatVector.fromArray(F, xt, e + 88), s2);
            acc2 = s2.fma(d, acc2);
            FloatVector s3 = v0.mul(FloatVector.fromArray(F, xt, e + 96));
            s3 = v1.fma(FloatVector.fromArray(F, xt, e + 104), s3);
            s3 = v2.fma(FloatVector.fromArray(F, xt, e + 112), s3);
            s3 = v3.fma(FloatVector.fromArray(F, xt, e + 120), s3);
            acc3 = s3.fma(d, acc3);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
        acc2.intoArray(lanes, 16);
        acc3.intoArray(lanes, 24);
    }

    /**
     * {@link #dot8} of one row with 2 inputs laid out token-interleaved (block b of input t at
     * {@code xOff + (b * 2 + t) * 32}), accumulators into {@code lanes[8t ..]}: the same operations in the same
     * order per input, the block's loads, conversions and scale shared by the 2.
     */
    private void dot8x2(int row, float[] xt, int xOff, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        int end = xOff + 2 * cols;
        for (int e = xOff; e < end; e += 64, o += BLOCK_BYTES) {
            IntVector a = (IntVector) ByteVector.fromMemorySegment(B, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector b = (IntVector) ByteVector.fromMemorySegment(B, data, o + 10, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            FloatVector v0 = (FloatVector) a.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v1 = (FloatVector) b.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v2 = (FloatVector) a.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector v3 = (FloatVector) b.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = v0.mul(FloatVector.fromArray(F, xt, e));
            s0 = v1.fma(FloatVector.fromArray(F, xt, e + 8), s0);
            s0 = v2.fma(FloatVector.fromArray(F, xt, e + 16), s0);
            s0 = v3.fma(FloatVector.fromArray(F, xt, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = v0.mul(FloatVector.fromArray(F, xt, e + 32));
            s1 = v1.fma(FloatVector.fromArray(F, xt, e + 40), s1);
            s1 = v2.fma(FloatVector.fromArray(F, xt, e + 48), s1);
            s1 = v3.fma(FloatVector.fromArray(F, xt, e + 56), s1);
            acc1 = s1.fma(d, acc1);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
    }


    /**
     * Independent tokens (batched decode) on the 8-lane path: the tokens go in groups of eight, then four, two
     * and one ({@link Q8_0Matrix#group}), each group's activations laid out once per matmul block by block
     * with the group's tokens side by side, and per row each group runs through one kernel that decodes each
     * block once for all its tokens; every token's result is {@link #dot8}'s, bit for bit.
     */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE) {
            multiplyLanes(pool, in, out, outStride, outOff);
            return;
        }
        if (!K8) {
            super.multiplyEach(pool, in, out, outStride, outOff);
            return;
        }
        int n = in.tokens();
        float[] x = in.x();
        float[] xt = SIDE_BY_SIDE.get(n * cols);
        for (int t0 = 0, g; t0 < n; t0 += g) {
            g = Q8_0Matrix.group(n - t0, cols);
            for (int i = 0; i < g; i++) {
                for (int b = 0; b < cols; b += BLOCK) {
                    System.arraycopy(x, (t0 + i) * cols + b, xt, t0 * cols + b * g + i * BLOCK, BLOCK);
                }
            }
        }
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            float[] lanes = new float[8 * L];
            for (int r = start; r < end; r++) {
                for (int t0 = 0, g; t0 < n; t0 += g) {
                    g = Q8_0Matrix.group(n - t0, cols);
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
                        out[at + i * outStride] = Simd.sum8(lanes, 8 * i);
                    }
                }
            }
        });
    }

    /**
     * Quantises {@code src[srcOff .. srcOff+count)} into {@code count / 32} Q4_0 blocks at {@code dst[dstOff..]},
     * exactly as ggml's {@code quantize_row_q4_0_ref}: {@code max} is the value of largest magnitude (the
     * first one on ties), {@code d = max / -8}, nibble = {@code min(15, (int8)(x * (1/d) + 8.5f))},
     * {@code d} stored as fp16 rounded to nearest even.
     */
    public static void quantize(float[] src, int srcOff, int count, MemorySegment dst, long dstOff) {
        if (count % BLOCK != 0) {
            throw new IllegalArgumentException("Q4_0 quantises whole blocks of " + BLOCK + " values, got " + count);
        }
        for (int b = 0; b < count / BLOCK; b++) {
            int s = srcOff + b * BLOCK;
            long o = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0f;
            float max = 0f;
            for (int j = 0; j < BLOCK; j++) {
                float v = src[s + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -8;
            float id = d != 0f ? 1f / d : 0f;
            dst.set(Simd.LE_SHORT, o, Float.floatToFloat16(d));
            for (int j = 0; j < 16; j++) {
                int lo = Math.min(15, (byte) (int) (src[s + j] * id + 8.5f)) & 0xFF;
                int hi = Math.min(15, (byte) (int) (src[s + 16 + j] * id + 8.5f)) & 0xFF;
                dst.set(ValueLayout.JAVA_BYTE, o + 2 + j, (byte) (lo | hi << 4));
            }
        }
    }
}
