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
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /**
     * The 8-lane (AVX2) one-token product: as {@link #dot8} for every row, {@code x} interleaved once per call.
     */
    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
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
        for (int b = 0; b < cols; b += BLOCK) {
            for (int k = 0; k < 4; k++) {
                for (int i = 0; i < 8; i++) {
                    dst[dOff + b + 8 * k + i] = x[xOff + b + 4 * i + k];
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
     * {@link Simd#sum8}.
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
        return Simd.sum8(acc) * 0x1p-24f;
    }

    /**
     * {@link #dot8} of one row with four interleaved inputs {@code stride} floats apart, into
     * {@code out[at + t * outStride]}: the same operations in the same order per input, the block's load,
     * conversions and scale shared.
     */
    private void dot8x4(int row, float[] xi, int xOff, int stride, float[] out, int at, int outStride, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int x1 = stride;
        int x2 = 2 * stride;
        int x3 = 3 * stride;
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = q0.mul(FloatVector.fromArray(F, xi, e));
            s0 = q1.fma(FloatVector.fromArray(F, xi, e + 8), s0);
            s0 = q2.fma(FloatVector.fromArray(F, xi, e + 16), s0);
            s0 = q3.fma(FloatVector.fromArray(F, xi, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = q0.mul(FloatVector.fromArray(F, xi, x1 + e));
            s1 = q1.fma(FloatVector.fromArray(F, xi, x1 + e + 8), s1);
            s1 = q2.fma(FloatVector.fromArray(F, xi, x1 + e + 16), s1);
            s1 = q3.fma(FloatVector.fromArray(F, xi, x1 + e + 24), s1);
            acc1 = s1.fma(d, acc1);
            FloatVector s2 = q0.mul(FloatVector.fromArray(F, xi, x2 + e));
            s2 = q1.fma(FloatVector.fromArray(F, xi, x2 + e + 8), s2);
            s2 = q2.fma(FloatVector.fromArray(F, xi, x2 + e + 16), s2);
            s2 = q3.fma(FloatVector.fromArray(F, xi, x2 + e + 24), s2);
            acc2 = s2.fma(d, acc2);
            FloatVector s3 = q0.mul(FloatVector.fromArray(F, xi, x3 + e));
            s3 = q1.fma(FloatVector.fromArray(F, xi, x3 + e + 8), s3);
            s3 = q2.fma(FloatVector.fromArray(F, xi, x3 + e + 16), s3);
            s3 = q3.fma(FloatVector.fromArray(F, xi, x3 + e + 24), s3);
            acc3 = s3.fma(d, acc3);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
        acc2.intoArray(lanes, 16);
        acc3.intoArray(lanes, 24);
        out[at] = Simd.sum8(lanes, 0) * 0x1p-24f;
        out[at + outStride] = Simd.sum8(lanes, 8) * 0x1p-24f;
        out[at + 2 * outStride] = Simd.sum8(lanes, 16) * 0x1p-24f;
        out[at + 3 * outStride] = Simd.sum8(lanes, 24) * 0x1p-24f;
    }

    /** {@link #dot8x4} for two inputs. */
    private void dot8x2(int row, float[] xi, int xOff, int stride, float[] out, int at, int outStride, float[] lanes) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            IntVector w = IntVector.fromMemorySegment(I, data, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = q0.mul(FloatVector.fromArray(F, xi, e));
            s0 = q1.fma(FloatVector.fromArray(F, xi, e + 8), s0);
            s0 = q2.fma(FloatVector.fromArray(F, xi, e + 16), s0);
            s0 = q3.fma(FloatVector.fromArray(F, xi, e + 24), s0);
            acc0 = s0.fma(d, acc0);
            FloatVector s1 = q0.mul(FloatVector.fromArray(F, xi, stride + e));
            s1 = q1.fma(FloatVector.fromArray(F, xi, stride + e + 8), s1);
            s1 = q2.fma(FloatVector.fromArray(F, xi, stride + e + 16), s1);
            s1 = q3.fma(FloatVector.fromArray(F, xi, stride + e + 24), s1);
            acc1 = s1.fma(d, acc1);
        }
        acc0.intoArray(lanes, 0);
        acc1.intoArray(lanes, 8);
        out[at] = Simd.sum8(lanes, 0) * 0x1p-24f;
        out[at + outStride] = Simd.sum8(lanes, 8) * 0x1p-24f;
    }

    /**
     * Independent tokens on the 8-lane path: each token interleaved once, then per row four tokens at a time
     * ({@link #dot8x4}), then two, then one; every token's result is {@link #dot8}'s, bit for bit.
     */
    private void multiplyEach8(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        int n = in.tokens();
        float[] x = in.x();
        float[] xi = INTERLEAVED.get(n * cols);
        for (int t = 0; t < n; t++) {
            interleave(x, t * cols, cols, xi, t * cols);
        }
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            float[] lanes = new float[4 * L];
            for (int r = start; r < end; r++) {
                int t = 0;
                for (; t + 4 <= n; t += 4) {
                    dot8x4(r, xi, t * cols, cols, out, t * outStride + outOff + r, outStride, lanes);
                }
                if (t + 2 <= n) {
                    dot8x2(r, xi, t * cols, cols, out, t * outStride + outOff + r, outStride, lanes);
                    t += 2;
                }
                if (t < n) {
                    out[t * outStride + outOff + r] = dot8(r, xi, t * cols);
                }
            }
        });
    }

    /** The 16-lane (AVX-512) shape written out: a block is two 16-byte loads, no inner loops. */
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
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /**
     * Independent tokens (batched decode): four tokens at a time share each block's loads and conversions
     * ({@link #dot16x4}), the rest go one by one; every token's result is {@link #dot16}'s, bit for bit.
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
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            float[] four = new float[4];
            for (int r = start; r < end; r++) {
                int t = 0;
                for (; t + 4 <= n; t += 4) {
                    dot16x4(r, x, t * cols, cols, four);
                    for (int i = 0; i < 4; i++) {
                        out[(t + i) * outStride + outOff + r] = four[i];
                    }
                }
                for (; t < n; t++) {
                    out[t * outStride + outOff + r] = dot16(r, x, t * cols);
                }
            }
        });
    }

    /**
     * {@link #dot16} of one row with four inputs {@code stride} floats apart, into {@code out[0..4)}: the
     * same operations in the same order per input, with the row's loads, conversions and scales shared.
     */
    private void dot16x4(int row, float[] x, int xOff, int stride, float[] out) {
        long base = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int x1 = xOff + stride;
        int x2 = x1 + stride;
        int x3 = x2 + stride;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = b * BLOCK;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector s0 = hi.fma(FloatVector.fromArray(F, x, xOff + xi + 16), lo.mul(FloatVector.fromArray(F, x, xOff + xi)));
            FloatVector s1 = hi.fma(FloatVector.fromArray(F, x, x1 + xi + 16), lo.mul(FloatVector.fromArray(F, x, x1 + xi)));
            FloatVector s2 = hi.fma(FloatVector.fromArray(F, x, x2 + xi + 16), lo.mul(FloatVector.fromArray(F, x, x2 + xi)));
            FloatVector s3 = hi.fma(FloatVector.fromArray(F, x, x3 + xi + 16), lo.mul(FloatVector.fromArray(F, x, x3 + xi)));
            acc0 = s0.fma(d, acc0);
            acc1 = s1.fma(d, acc1);
            acc2 = s2.fma(d, acc2);
            acc3 = s3.fma(d, acc3);
        }
        out[0] = acc0.reduceLanes(VectorOperators.ADD);
        out[1] = acc1.reduceLanes(VectorOperators.ADD);
        out[2] = acc2.reduceLanes(VectorOperators.ADD);
        out[3] = acc3.reduceLanes(VectorOperators.ADD);
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
