package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q4_1: blocks of 32 values, {@code fp16 d}, {@code fp16 m}, then 16 bytes of nibbles laid out as in
 * Q4_0 (low nibbles values 0..15, high nibbles 16..31); value = nibble * d + m.
 */
public final class Q4_1Matrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q4_1.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q4_1.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q4_1Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_1, data, rows, cols, BLOCK);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            FloatVector m = FloatVector.broadcast(F, Simd.fp16(data, o + 2));
            int e = off + b * BLOCK;
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 4 + c, LE);
                for (int p = 0; p < P; p++) {
                    // nibbles split on int lanes: x86 has no byte-lane shift
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    ((FloatVector) w.and(0x0F).convert(VectorOperators.I2F, 0)).mul(d).add(m).intoArray(dst, e + c + p * L);
                    ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0)).mul(d).add(m)
                            .intoArray(dst, e + 16 + c + p * L);
                }
            }
        }
    }

    // d * sum(q * x) + m * sum(x): one multiply-add per value instead of two.
    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        float offsets = 0f;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 4 + c, LE);
                for (int p = 0; p < P; p++) {
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    int i = xi + c + p * L;
                    s = ((FloatVector) w.and(0x0F).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, x, i), s);
                    s = ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0))
                            .fma(FloatVector.fromArray(F, x, i + 16), s);
                }
            }
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
            offsets += Simd.fp16(data, o + 2) * xSums[b];
        }
        return Simd.sum(acc) + offsets;
    }
}
