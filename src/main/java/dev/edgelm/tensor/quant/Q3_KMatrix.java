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
 * ggml Q3_K: super-blocks of 256 values, 110 bytes: 32 bytes {@code hmask}, 64 bytes of 2-bit values,
 * 12 bytes of packed 6-bit signed scales ({@link KScales#q3Scale}), {@code fp16 d}. Value 128h + 32j + l
 * (h 0..1, j 0..3, l 0..31) has low bits 2j..2j+1 of {@code qs[32h + l]}, is reduced by 4 unless bit
 * 4h + j of {@code hmask[l]} is set, and uses scale 8h + 2j + l/16. Value = d * scale * q.
 */
public final class Q3_KMatrix extends QuantizedMatrix {
    static final int BLOCK = 256;
    static final int BLOCK_BYTES = 110;

    public Q3_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q3_K, data, rows, cols);
    }

    /** Signed 3-bit values: 2 low bits at {@code shift} of {@code qs}, high bit {@code bit} of {@code hm}. */
    private static ByteVector threeBit(ByteVector qs, ByteVector hm, int shift, int bit) {
        ByteVector high = hm.lanewise(VectorOperators.LSHR, bit).and((byte) 1).lanewise(VectorOperators.LSHL, 2);
        return qs.lanewise(VectorOperators.LSHR, shift).and((byte) 3).or(high).sub((byte) 4);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 108);
            long lo = Simd.u64(data, o + 96);
            int hi = Simd.u32(data, o + 104);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector qs = Simd.bytes(data, o + 32 + 32 * h + l);
                    ByteVector hm = Simd.bytes(data, o + l);
                    for (int j = 0; j < 4; j++) {
                        FloatVector dl = FloatVector.broadcast(F, d * KScales.q3Scale(lo, hi, 8 * h + 2 * j + l / 16));
                        ByteVector v = threeBit(qs, hm, 2 * j, 4 * h + j);
                        for (int p = 0; p < P; p++) {
                            Simd.toFloat(v, p).mul(dl).intoArray(dst, e + 128 * h + 32 * j + l + p * L);
                        }
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
            float d = Simd.fp16(data, o + 108);
            long lo = Simd.u64(data, o + 96);
            int hi = Simd.u32(data, o + 104);
            int xi = xOff + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector qs = Simd.bytes(data, o + 32 + 32 * h + l);
                    ByteVector hm = Simd.bytes(data, o + l);
                    FloatVector s = FloatVector.zero(F);
                    for (int j = 0; j < 4; j++) {
                        FloatVector dl = FloatVector.broadcast(F, d * KScales.q3Scale(lo, hi, 8 * h + 2 * j + l / 16));
                        ByteVector v = threeBit(qs, hm, 2 * j, 4 * h + j);
                        for (int p = 0; p < P; p++) {
                            int i = xi + 128 * h + 32 * j + l + p * L;
                            s = Simd.toFloat(v, p).mul(dl).fma(FloatVector.fromArray(F, x, i), s);
                        }
                    }
                    acc = acc.add(s);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
