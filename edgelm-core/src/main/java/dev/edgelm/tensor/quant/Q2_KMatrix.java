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
 * ggml Q2_K: super-blocks of 256 values, 84 bytes: 16 scale bytes (low nibble scale, high nibble min, one
 * per 16 values), 64 bytes of 2-bit values, {@code fp16 d}, {@code fp16 dmin}. Value 128h + 32j + l
 * (h 0..1, j 0..3, l 0..31) is bits 2j..2j+1 of {@code qs[32h + l]} and uses scale byte 8h + 2j + l/16.
 * Value = d * scale * q - dmin * min.
 */
public final class Q2_KMatrix extends QuantizedMatrix {
    static final int BLOCK = GgmlType.Q2_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q2_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q2_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q2_K, data, rows, cols, 0);
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 80);
            float dmin = Simd.fp16(data, o + 82);
            long lo = Simd.u64(data, o);
            long hi = Simd.u64(data, o + 8);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * h + l, LE);
                    for (int p = 0; p < P; p++) {
                        // 2-bit fields split on int lanes: x86 has no byte-lane shift
                        IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        for (int j = 0; j < 4; j++) {
                            int sc = (int) ((h == 0 ? lo : hi) >>> 8 * (2 * j + l / 16)) & 0xFF;
                            FloatVector dl = FloatVector.broadcast(F, d * (sc & 0xF));
                            FloatVector ml = FloatVector.broadcast(F, dmin * (sc >> 4));
                            ((FloatVector) w.lanewise(VectorOperators.LSHR, 2 * j).and(3).convert(VectorOperators.I2F, 0))
                                    .mul(dl).sub(ml).intoArray(dst, e + 128 * h + 32 * j + l + p * L);
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
            float d = Simd.fp16(data, o + 80);
            float dmin = Simd.fp16(data, o + 82);
            long lo = Simd.u64(data, o);
            long hi = Simd.u64(data, o + 8);
            int xi = xOff + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, data, o + 16 + 32 * h + l, LE);
                    FloatVector s = FloatVector.zero(F);
                    for (int p = 0; p < P; p++) {
                        IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                        for (int j = 0; j < 4; j++) {
                            int sc = (int) ((h == 0 ? lo : hi) >>> 8 * (2 * j + l / 16)) & 0xFF;
                            FloatVector dl = FloatVector.broadcast(F, d * (sc & 0xF));
                            FloatVector ml = FloatVector.broadcast(F, -dmin * (sc >> 4));
                            int i = xi + 128 * h + 32 * j + l + p * L;
                            s = ((FloatVector) w.lanewise(VectorOperators.LSHR, 2 * j).and(3).convert(VectorOperators.I2F, 0))
                                    .fma(dl, ml).fma(FloatVector.fromArray(F, x, i), s);
                        }
                    }
                    acc = acc.add(s);
                }
            }
        }
        return Simd.sum(acc);
    }
}
