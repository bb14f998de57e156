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
 * ggml Q6_K: super-blocks of 256 values, 210 bytes: 128 bytes {@code ql} (low nibbles), 64 bytes
 * {@code qh} (2-bit high parts), 16 int8 scales (one per 16 values), {@code fp16 d}. Half h (0..1) uses
 * {@code ql[64h..]}, {@code qh[32h..]}, scales {@code 8h..}; for l in 0..31 its values are
 * l: low nibble of ql[l], qh bits 0-1; 32 + l: low nibble of ql[32 + l], bits 2-3; 64 + l: high nibble of
 * ql[l], bits 4-5; 96 + l: high nibble of ql[32 + l], bits 6-7. Value = d * scale * (q - 32).
 */
public final class Q6_KMatrix extends QuantizedMatrix {
    static final int BLOCK = 256;
    static final int BLOCK_BYTES = 210;

    public Q6_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q6_K, data, rows, cols);
    }

    private static ByteVector sixBit(ByteVector nibbles, ByteVector qh, int shift) {
        return nibbles.or(qh.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                .sub((byte) 32);
    }

    /** d * scale for the 16 values starting at value {@code v} (0..255) of the super-block at {@code o}. */
    private float scale(long o, float d, int v) {
        return d * data.get(ValueLayout.JAVA_BYTE, o + 192 + v / 16);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 208);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int c = 0; c < 32; c += BL) {
                    ByteVector a = Simd.bytes(data, o + 64 * h + c);
                    ByteVector a32 = Simd.bytes(data, o + 64 * h + 32 + c);
                    ByteVector hq = Simd.bytes(data, o + 128 + 32 * h + c);
                    ByteVector q1 = sixBit(a.and((byte) 0x0F), hq, 0);
                    ByteVector q2 = sixBit(a32.and((byte) 0x0F), hq, 2);
                    ByteVector q3 = sixBit(a.lanewise(VectorOperators.LSHR, 4), hq, 4);
                    ByteVector q4 = sixBit(a32.lanewise(VectorOperators.LSHR, 4), hq, 6);
                    for (int p = 0; p < P; p++) {
                        int v = 128 * h + c + p * L;
                        Simd.toFloat(q1, p).mul(scale(o, d, v)).intoArray(dst, e + v);
                        Simd.toFloat(q2, p).mul(scale(o, d, v + 32)).intoArray(dst, e + v + 32);
                        Simd.toFloat(q3, p).mul(scale(o, d, v + 64)).intoArray(dst, e + v + 64);
                        Simd.toFloat(q4, p).mul(scale(o, d, v + 96)).intoArray(dst, e + v + 96);
                    }
                }
            }
        }
    }

    @Override
    public float dotRow(int row, float[] x, int xOff) {
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 208);
            int xi = xOff + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int c = 0; c < 32; c += BL) {
                    ByteVector a = Simd.bytes(data, o + 64 * h + c);
                    ByteVector a32 = Simd.bytes(data, o + 64 * h + 32 + c);
                    ByteVector hq = Simd.bytes(data, o + 128 + 32 * h + c);
                    ByteVector q1 = sixBit(a.and((byte) 0x0F), hq, 0);
                    ByteVector q2 = sixBit(a32.and((byte) 0x0F), hq, 2);
                    ByteVector q3 = sixBit(a.lanewise(VectorOperators.LSHR, 4), hq, 4);
                    ByteVector q4 = sixBit(a32.lanewise(VectorOperators.LSHR, 4), hq, 6);
                    FloatVector s = FloatVector.zero(F);
                    for (int p = 0; p < P; p++) {
                        int v = 128 * h + c + p * L;
                        s = Simd.toFloat(q1, p).mul(scale(o, d, v)).fma(FloatVector.fromArray(F, x, xi + v), s);
                        s = Simd.toFloat(q2, p).mul(scale(o, d, v + 32)).fma(FloatVector.fromArray(F, x, xi + v + 32), s);
                        s = Simd.toFloat(q3, p).mul(scale(o, d, v + 64)).fma(FloatVector.fromArray(F, x, xi + v + 64), s);
                        s = Simd.toFloat(q4, p).mul(scale(o, d, v + 96)).fma(FloatVector.fromArray(F, x, xi + v + 96), s);
                    }
                    acc = acc.add(s);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
