package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q4_0: blocks of 32 values, {@code fp16 d} then 16 bytes; byte j holds value j in its low nibble and
 * value j + 16 in its high nibble; value = (nibble - 8) * d. {@link #quantize} is ggml's reference
 * quantiser ({@code quantize_row_q4_0_ref}), bit for bit.
 */
public final class Q4_0Matrix extends QuantizedMatrix {
    static final int BLOCK = 32;
    static final int BLOCK_BYTES = 18;

    public Q4_0Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_0, data, rows, cols);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = scale(o);
            int e = off + b * BLOCK;
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = Simd.bytes(data, o + 2 + c);
                ByteVector lo = q.and((byte) 0x0F).sub((byte) 8);
                ByteVector hi = q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
                for (int p = 0; p < P; p++) {
                    Simd.toFloat(lo, p).mul(d).intoArray(dst, e + c + p * L);
                    Simd.toFloat(hi, p).mul(d).intoArray(dst, e + 16 + c + p * L);
                }
            }
        }
    }

    @Override
    public float dotRow(int row, float[] x, int xOff) {
        long base = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        int b = 0;
        // two blocks per step, each summed from zero, so the loop-carried chains stay short
        for (; b + 1 < blocksPerRow; b += 2) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            acc0 = blockSum(o, x, xi).fma(scale(o), acc0);
            acc1 = blockSum(o + BLOCK_BYTES, x, xi + BLOCK).fma(scale(o + BLOCK_BYTES), acc1);
        }
        if (b < blocksPerRow) {
            long o = base + (long) b * BLOCK_BYTES;
            acc0 = blockSum(o, x, xOff + b * BLOCK).fma(scale(o), acc0);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    private FloatVector scale(long o) {
        return FloatVector.broadcast(F, Simd.fp16(data, o));
    }

    /** Lane-wise partial sums of (nibble - 8) * x over one block (unscaled). */
    private FloatVector blockSum(long o, float[] x, int xi) {
        FloatVector s = FloatVector.zero(F);
        for (int c = 0; c < 16; c += BL) {
            ByteVector q = Simd.bytes(data, o + 2 + c);
            ByteVector lo = q.and((byte) 0x0F).sub((byte) 8);
            ByteVector hi = q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
            for (int p = 0; p < P; p++) {
                int i = xi + c + p * L;
                s = Simd.toFloat(lo, p).fma(FloatVector.fromArray(F, x, i), s);
                s = Simd.toFloat(hi, p).fma(FloatVector.fromArray(F, x, i + 16), s);
            }
        }
        return s;
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
            dst.set(Quantizing.LE_SHORT, o, Float.floatToFloat16(d));
            for (int j = 0; j < 16; j++) {
                int lo = Math.min(15, (byte) (int) (src[s + j] * id + 8.5f)) & 0xFF;
                int hi = Math.min(15, (byte) (int) (src[s + 16 + j] * id + 8.5f)) & 0xFF;
                dst.set(ValueLayout.JAVA_BYTE, o + 2 + j, (byte) (lo | hi << 4));
            }
        }
    }
}
