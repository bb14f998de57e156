package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q8_0: blocks of 32 values, {@code fp16 d} then 32 {@code int8 q}; value = q * d.
 * {@link #quantize} is ggml's reference quantiser ({@code quantize_row_q8_0_ref}), bit for bit.
 */
public final class Q8_0Matrix extends QuantizedMatrix {
    static final int BLOCK = 32;
    static final int BLOCK_BYTES = 34;

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

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
