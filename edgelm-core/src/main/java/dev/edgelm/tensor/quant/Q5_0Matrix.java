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
 * ggml Q5_0: blocks of 32 values, {@code fp16 d}, a little-endian u32 {@code qh} whose bit j is the fifth
 * bit of value j, then 16 bytes of low nibbles laid out as in Q4_0; value = (5-bit q - 16) * d.
 */
public final class Q5_0Matrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q5_0.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q5_0.typeSize();

    private static final int BIAS = 16;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q5_0Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q5_0, data, rows, cols, 0);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            int qh = Simd.u32(data, o + 2);
            int e = off + b * BLOCK;
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 6 + c, LE);
                for (int p = 0; p < P; p++) {
                    int j = c + p * L;
                    // nibbles split on int lanes: x86 has no byte-lane shift
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    // fifth bits: bit (value index) of qh, per lane
                    IntVector highLo = IntVector.broadcast(I, qh).lanewise(VectorOperators.LSHR, IntVector.fromArray(I, Bits.IOTA, j))
                            .and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector highHi = IntVector.broadcast(I, qh).lanewise(VectorOperators.LSHR, IntVector.fromArray(I, Bits.IOTA, 16 + j))
                            .and(1).lanewise(VectorOperators.LSHL, 4);
                    FloatVector fiveBitLo = (FloatVector) w.and(0x0F).or(highLo)
                            .sub(BIAS).convert(VectorOperators.I2F, 0);
                    FloatVector fiveBitHi = (FloatVector) w.lanewise(VectorOperators.LSHR, 4).or(highHi)
                            .sub(BIAS).convert(VectorOperators.I2F, 0);
                    fiveBitLo.mul(d).intoArray(dst, e + j);
                    fiveBitHi.mul(d).intoArray(dst, e + 16 + j);
                }
            }
        }
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int qh = Simd.u32(data, o + 2);
            int xi = xOff + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 6 + c, LE);
                for (int p = 0; p < P; p++) {
                    int j = c + p * L;
                    // nibbles split on int lanes: x86 has no byte-lane shift
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    // fifth bits: bit (value index) of qh, per lane
                    IntVector highLo = IntVector.broadcast(I, qh).lanewise(VectorOperators.LSHR, IntVector.fromArray(I, Bits.IOTA, j))
                            .and(1).lanewise(VectorOperators.LSHL, 4);
                    IntVector highHi = IntVector.broadcast(I, qh).lanewise(VectorOperators.LSHR, IntVector.fromArray(I, Bits.IOTA, 16 + j))
                            .and(1).lanewise(VectorOperators.LSHL, 4);
                    FloatVector fiveBitLo = (FloatVector) w.and(0x0F).or(highLo)
                            .sub(BIAS).convert(VectorOperators.I2F, 0);
                    FloatVector fiveBitHi = (FloatVector) w.lanewise(VectorOperators.LSHR, 4).or(highHi)
                            .sub(BIAS).convert(VectorOperators.I2F, 0);
                    s = fiveBitLo.fma(FloatVector.fromArray(F, x, xi + j), s);
                    s = fiveBitHi.fma(FloatVector.fromArray(F, x, xi + 16 + j), s);
                }
            }
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }
}
