package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q4_K: super-blocks of 256 values, 144 bytes: {@code fp16 d}, {@code fp16 dmin}, 12 bytes of packed
 * 6-bit scales and mins for 8 sub-blocks of 32 ({@link KScales}), then 128 bytes of nibbles. Group g
 * (0..3) is bytes 32g..32g+31: low nibbles are values 64g..64g+31 (sub-block 2g), high nibbles the next 32
 * (sub-block 2g+1). Value = d * scale * q - dmin * min.
 */
public final class Q4_KMatrix extends QuantizedMatrix {
    static final int BLOCK = 256;
    static final int BLOCK_BYTES = 144;

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q4_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_K, data, rows, cols);
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
                    // sub-block j: the low (even j) or high (odd j) nibbles of group j / 2
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * (j >> 1) + c, LE)
                            .lanewise(VectorOperators.LSHR, 4 * (j & 1)).and((byte) 0x0F);
                    for (int p = 0; p < P; p++) {
                        ((FloatVector) q.convertShape(VectorOperators.B2F, F, p)).mul(dj).sub(mj).intoArray(dst, e + c + p * L);
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
            float d = Simd.fp16(data, o);
            float dmin = Simd.fp16(data, o + 2);
            long sc = KScales.scales(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            long mn = KScales.mins(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            for (int g = 0; g < 4; g++) {
                // group g: low nibbles are sub-block 2g, high nibbles sub-block 2g + 1;
                // value = q * (d * scale) - dmin * min, fused; each group sums from zero
                FloatVector d1 = FloatVector.broadcast(F, d * KScales.at(sc, 2 * g));
                FloatVector m1 = FloatVector.broadcast(F, -dmin * KScales.at(mn, 2 * g));
                FloatVector d2 = FloatVector.broadcast(F, d * KScales.at(sc, 2 * g + 1));
                FloatVector m2 = FloatVector.broadcast(F, -dmin * KScales.at(mn, 2 * g + 1));
                int xi = xOff + b * BLOCK + 64 * g;
                FloatVector s = FloatVector.zero(F);
                for (int c = 0; c < 32; c += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * g + c, LE);
                    ByteVector qlo = q.and((byte) 0x0F);
                    ByteVector qhi = q.lanewise(VectorOperators.LSHR, 4);
                    for (int p = 0; p < P; p++) {
                        int i = xi + c + p * L;
                        s = ((FloatVector) qlo.convertShape(VectorOperators.B2F, F, p)).fma(d1, m1)
                                .fma(FloatVector.fromArray(F, x, i), s);
                        s = ((FloatVector) qhi.convertShape(VectorOperators.B2F, F, p)).fma(d2, m2)
                                .fma(FloatVector.fromArray(F, x, i + 32), s);
                    }
                }
                acc = acc.add(s);
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
