package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
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
            for (int g = 0; g < 4; g++) {
                FloatVector d1 = FloatVector.broadcast(F, d * KScales.scale(data, o + 4, 2 * g));
                FloatVector m1 = FloatVector.broadcast(F, dmin * KScales.min(data, o + 4, 2 * g));
                FloatVector d2 = FloatVector.broadcast(F, d * KScales.scale(data, o + 4, 2 * g + 1));
                FloatVector m2 = FloatVector.broadcast(F, dmin * KScales.min(data, o + 4, 2 * g + 1));
                int e = off + b * BLOCK + 64 * g;
                for (int c = 0; c < 32; c += BL) {
                    ByteVector q = Simd.bytes(data, o + 16 + 32 * g + c);
                    ByteVector lo = q.and((byte) 0x0F);
                    ByteVector hi = q.lanewise(VectorOperators.LSHR, 4);
                    for (int p = 0; p < P; p++) {
                        int j = e + c + p * L;
                        Simd.toFloat(lo, p).mul(d1).sub(m1).intoArray(dst, j);
                        Simd.toFloat(hi, p).mul(d2).sub(m2).intoArray(dst, j + 32);
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
            for (int g = 0; g < 4; g++) {
                FloatVector d1 = FloatVector.broadcast(F, d * KScales.scale(data, o + 4, 2 * g));
                FloatVector m1 = FloatVector.broadcast(F, -dmin * KScales.min(data, o + 4, 2 * g));
                FloatVector d2 = FloatVector.broadcast(F, d * KScales.scale(data, o + 4, 2 * g + 1));
                FloatVector m2 = FloatVector.broadcast(F, -dmin * KScales.min(data, o + 4, 2 * g + 1));
                int xi = xOff + b * BLOCK + 64 * g;
                FloatVector s = FloatVector.zero(F);
                for (int c = 0; c < 32; c += BL) {
                    ByteVector q = Simd.bytes(data, o + 16 + 32 * g + c);
                    ByteVector lo = q.and((byte) 0x0F);
                    ByteVector hi = q.lanewise(VectorOperators.LSHR, 4);
                    for (int p = 0; p < P; p++) {
                        int j = xi + c + p * L;
                        s = Simd.toFloat(lo, p).fma(d1, m1).fma(FloatVector.fromArray(F, x, j), s);
                        s = Simd.toFloat(hi, p).fma(d2, m2).fma(FloatVector.fromArray(F, x, j + 32), s);
                    }
                }
                acc = acc.add(s);
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
