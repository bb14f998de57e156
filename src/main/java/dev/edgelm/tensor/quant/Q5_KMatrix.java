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
 * ggml Q5_K: super-blocks of 256 values, 176 bytes: {@code fp16 d}, {@code fp16 dmin}, 12 bytes of packed
 * scales and mins (as Q4_K), 32 bytes {@code qh}, 128 bytes of nibbles laid out as in Q4_K. The fifth bit
 * of value 64g + l is bit 2g of {@code qh[l]}, of value 64g + 32 + l bit 2g + 1.
 * Value = d * scale * q - dmin * min.
 */
public final class Q5_KMatrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q5_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q5_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q5_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q5_K, data, rows, cols, 0);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o);
            float dmin = Simd.fp16(data, o + 2);
            long sc = KScales.scales(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            long mn = KScales.mins(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            for (int j = 0; j < 8; j++) {
                FloatVector dj = FloatVector.broadcast(F, d * KScales.at(sc, j));
                FloatVector mj = FloatVector.broadcast(F, dmin * KScales.at(mn, j));
                int e = off + b * BLOCK + 32 * j;
                for (int c = 0; c < 32; c += BL) {
                    // sub-block j: low (even j) or high (odd j) nibbles of group j / 2, fifth bit = bit j of qh
                    ByteVector qh = ByteVector.fromMemorySegment(B, data, o + 16 + c, LE);
                    ByteVector qs = ByteVector.fromMemorySegment(B, data, o + 48 + 32 * (j >> 1) + c, LE);
                    for (int p = 0; p < P; p++) {
                        // bit fields split on int lanes: x86 has no byte-lane shift
                        IntVector h = (IntVector) qh.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        IntVector q = ((IntVector) qs.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p))
                                .lanewise(VectorOperators.LSHR, 4 * (j & 1)).and(0x0F)
                                .or(h.lanewise(VectorOperators.LSHR, j).and(1).lanewise(VectorOperators.LSHL, 4));
                        ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(dj).sub(mj).intoArray(dst, e + c + p * L);
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
            float d = Simd.fp16(data, o);
            float dmin = Simd.fp16(data, o + 2);
            long sc = KScales.scales(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            long mn = KScales.mins(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            for (int j = 0; j < 8; j++) {
                FloatVector dj = FloatVector.broadcast(F, d * KScales.at(sc, j));
                FloatVector mj = FloatVector.broadcast(F, -dmin * KScales.at(mn, j));
                int xi = xOff + b * BLOCK + 32 * j;
                FloatVector s = FloatVector.zero(F);
                for (int c = 0; c < 32; c += BL) {
                    // sub-block j: low (even j) or high (odd j) nibbles of group j / 2, fifth bit = bit j of qh
                    ByteVector qh = ByteVector.fromMemorySegment(B, data, o + 16 + c, LE);
                    ByteVector qs = ByteVector.fromMemorySegment(B, data, o + 48 + 32 * (j >> 1) + c, LE);
                    for (int p = 0; p < P; p++) {
                        // bit fields split on int lanes: x86 has no byte-lane shift
                        IntVector h = (IntVector) qh.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        IntVector q = ((IntVector) qs.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p))
                                .lanewise(VectorOperators.LSHR, 4 * (j & 1)).and(0x0F)
                                .or(h.lanewise(VectorOperators.LSHR, j).and(1).lanewise(VectorOperators.LSHL, 4));
                        s = ((FloatVector) q.convert(VectorOperators.I2F, 0)).fma(dj, mj).fma(FloatVector.fromArray(F, x, xi + c + p * L), s);
                    }
                }
                acc = acc.add(s);
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
