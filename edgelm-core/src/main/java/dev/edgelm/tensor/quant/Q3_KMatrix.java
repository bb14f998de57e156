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
 * ggml Q3_K: super-blocks of 256 values, 110 bytes: 32 bytes {@code hmask}, 64 bytes of 2-bit values,
 * 12 bytes of packed 6-bit signed scales ({@link KScales#q3Scales}), {@code fp16 d}. Value 128h + 32j + l
 * (h 0..1, j 0..3, l 0..31) has low bits 2j..2j+1 of {@code qs[32h + l]}, is reduced by 4 unless bit
 * 4h + j of {@code hmask[l]} is set, and uses scale 8h + 2j + l/16. Value = d * scale * q.
 */
public final class Q3_KMatrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q3_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q3_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q3_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q3_K, data, rows, cols, 0);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 108);
            long lo = Simd.u64(data, o + 96);
            int hi = Simd.u32(data, o + 104);
            long sc0 = KScales.q3Scales(lo, hi, 0);
            long sc1 = KScales.q3Scales(lo, hi, 1);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector qs = ByteVector.fromMemorySegment(B, data, o + 32 + 32 * h + l, LE);
                    ByteVector hm = ByteVector.fromMemorySegment(B, data, o + l, LE);
                    for (int p = 0; p < P; p++) {
                        // bit fields split on int lanes: x86 has no byte-lane shift
                        IntVector w = (IntVector) qs.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        IntVector m = (IntVector) hm.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        for (int j = 0; j < 4; j++) {
                            FloatVector dl = FloatVector.broadcast(F, d * (KScales.at(h == 0 ? sc0 : sc1, 2 * j + l / 16) - 32));
                            IntVector v = w.lanewise(VectorOperators.LSHR, 2 * j).and(3)
                                    .or(m.lanewise(VectorOperators.LSHR, 4 * h + j).and(1).lanewise(VectorOperators.LSHL, 2)).sub(4);
                            ((FloatVector) v.convert(VectorOperators.I2F, 0)).mul(dl).intoArray(dst, e + 128 * h + 32 * j + l + p * L);
                        }
                    }
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
            float d = Simd.fp16(data, o + 108);
            long lo = Simd.u64(data, o + 96);
            int hi = Simd.u32(data, o + 104);
            long sc0 = KScales.q3Scales(lo, hi, 0);
            long sc1 = KScales.q3Scales(lo, hi, 1);
            int xi = xOff + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector qs = ByteVector.fromMemorySegment(B, data, o + 32 + 32 * h + l, LE);
                    ByteVector hm = ByteVector.fromMemorySegment(B, data, o + l, LE);
                    FloatVector s = FloatVector.zero(F);
                    for (int p = 0; p < P; p++) {
                        IntVector w = (IntVector) qs.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        IntVector m = (IntVector) hm.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        for (int j = 0; j < 4; j++) {
                            FloatVector dl = FloatVector.broadcast(F, d * (KScales.at(h == 0 ? sc0 : sc1, 2 * j + l / 16) - 32));
                            IntVector v = w.lanewise(VectorOperators.LSHR, 2 * j).and(3)
                                    .or(m.lanewise(VectorOperators.LSHR, 4 * h + j).and(1).lanewise(VectorOperators.LSHL, 2)).sub(4);
                            int i = xi + 128 * h + 32 * j + l + p * L;
                            s = ((FloatVector) v.convert(VectorOperators.I2F, 0)).mul(dl).fma(FloatVector.fromArray(F, x, i), s);
                        }
                    }
                    acc = acc.add(s);
                }
            }
        }
        return Simd.sum(acc);
    }
}
