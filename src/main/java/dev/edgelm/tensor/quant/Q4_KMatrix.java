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
 * ggml Q4_K: super-blocks of 256 values, 144 bytes: {@code fp16 d}, {@code fp16 dmin}, 12 bytes of packed
 * 6-bit scales and mins for 8 sub-blocks of 32 ({@link KScales}), then 128 bytes of nibbles. Group g
 * (0..3) is bytes 32g..32g+31: low nibbles are values 64g..64g+31 (sub-block 2g), high nibbles the next 32
 * (sub-block 2g+1). Value = d * scale * q - dmin * min.
 */
public final class Q4_KMatrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q4_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q4_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q4_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_K, data, rows, cols, 32);
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
            for (int g = 0; g < 4; g++) {
                FloatVector d1 = FloatVector.broadcast(F, d * KScales.at(sc, 2 * g));
                FloatVector m1 = FloatVector.broadcast(F, dmin * KScales.at(mn, 2 * g));
                FloatVector d2 = FloatVector.broadcast(F, d * KScales.at(sc, 2 * g + 1));
                FloatVector m2 = FloatVector.broadcast(F, dmin * KScales.at(mn, 2 * g + 1));
                int e = off + b * BLOCK + 64 * g;
                for (int c = 0; c < 32; c += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * g + c, LE);
                    for (int p = 0; p < P; p++) {
                        IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        ((FloatVector) w.and(0x0F).convert(VectorOperators.I2F, 0)).mul(d1).sub(m1).intoArray(dst, e + c + p * L);
                        ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0)).mul(d2).sub(m2)
                                .intoArray(dst, e + 32 + c + p * L);
                    }
                }
            }
        }
    }

    // Per sub-block: d * scale * sum(q * x) - dmin * min * sum(x), the second from the run sums (one
    // multiply-add per value instead of two). Nibbles are split on int lanes (x86 has no byte-lane
    // shift). The sub-block products alternate between two pairs of accumulators (swapped every group) to
    // shorten the multiply-add chains. 1024x3584 in L2, one thread: 5.5 -> 5.6 GB/s (bound by per-vector
    // work; the per-value multiply-add with the min alone cost more than the widening gained).
    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        long base = row * rowBytes;
        FloatVector accLo = FloatVector.zero(F);
        FloatVector accHi = FloatVector.zero(F);
        FloatVector accLo2 = FloatVector.zero(F);
        FloatVector accHi2 = FloatVector.zero(F);
        float offsets = 0f;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o);
            long sc = KScales.scales(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            long mn = KScales.mins(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            int xi = xOff + b * BLOCK;
            for (int g = 0; g < 4; g++) {
                // group g: low nibbles are sub-block 2g, high nibbles sub-block 2g + 1
                FloatVector lo = FloatVector.zero(F);
                FloatVector hi = FloatVector.zero(F);
                for (int c = 0; c < 32; c += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * g + c, LE);
                    for (int p = 0; p < P; p++) {
                        IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        int i = xi + 64 * g + c + p * L;
                        lo = ((FloatVector) w.and(0x0F).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, x, i), lo);
                        hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convert(VectorOperators.I2F, 0))
                                .fma(FloatVector.fromArray(F, x, i + 32), hi);
                    }
                }
                FloatVector nextLo = lo.fma(FloatVector.broadcast(F, d * KScales.at(sc, 2 * g)), accLo);
                FloatVector nextHi = hi.fma(FloatVector.broadcast(F, d * KScales.at(sc, 2 * g + 1)), accHi);
                accLo = accLo2;
                accHi = accHi2;
                accLo2 = nextLo;
                accHi2 = nextHi;
            }
            int k = (xi - xOff) / 32;
            float m = (KScales.at(mn, 0) * xSums[k] + KScales.at(mn, 1) * xSums[k + 1])
                    + (KScales.at(mn, 2) * xSums[k + 2] + KScales.at(mn, 3) * xSums[k + 3])
                    + ((KScales.at(mn, 4) * xSums[k + 4] + KScales.at(mn, 5) * xSums[k + 5])
                    + (KScales.at(mn, 6) * xSums[k + 6] + KScales.at(mn, 7) * xSums[k + 7]));
            offsets += Simd.fp16(data, o + 2) * m;
        }
        return accLo.add(accHi).add(accLo2.add(accHi2)).reduceLanes(VectorOperators.ADD) - offsets;
    }
}
