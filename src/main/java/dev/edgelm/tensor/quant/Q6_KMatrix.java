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
 * ggml Q6_K: super-blocks of 256 values, 210 bytes: 128 bytes {@code ql} (low nibbles), 64 bytes
 * {@code qh} (2-bit high parts), 16 int8 scales (one per 16 values), {@code fp16 d}. Half h (0..1) uses
 * {@code ql[64h..]}, {@code qh[32h..]}, scales {@code 8h..}; for l in 0..31 its values are
 * l: low nibble of ql[l], qh bits 0-1; 32 + l: low nibble of ql[32 + l], bits 2-3; 64 + l: high nibble of
 * ql[l], bits 4-5; 96 + l: high nibble of ql[32 + l], bits 6-7. Value = d * scale * (q - 32).
 */
public final class Q6_KMatrix extends QuantizedMatrix {
    static final int BLOCK = 256;
    static final int BLOCK_BYTES = 210;

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    public Q6_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q6_K, data, rows, cols, 0);
    }

    /** The int8 scale of 16-value group {@code g} (0..15), from the scale bytes read as two words. */
    private static int scale(long lo, long hi, int g) {
        return (byte) ((g < 8 ? lo : hi) >>> 8 * (g & 7));
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 208);
            long lo = Simd.u64(data, o + 192);
            long hi = Simd.u64(data, o + 200);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int k = 0; k < 4; k++) {
                    for (int c = 0; c < 32; c += BL) {
                        // quarter k of half h: low (k < 2) or high nibble of ql[64h + 32(k & 1) + c ..],
                        // bits 2k..2k+1 of qh[32h + c ..] on top, minus 32
                        ByteVector qh = ByteVector.fromMemorySegment(B, data, o + 128 + 32 * h + c, LE);
                        ByteVector ql = ByteVector.fromMemorySegment(B, data, o + 64 * h + 32 * (k & 1) + c, LE);
                        for (int p = 0; p < P; p++) {
                            // bit fields split on int lanes: x86 has no byte-lane shift
                            IntVector high = (IntVector) qh.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                            IntVector q = ((IntVector) ql.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p))
                                    .lanewise(VectorOperators.LSHR, 4 * (k >> 1)).and(0x0F)
                                    .or(high.lanewise(VectorOperators.LSHR, 2 * k).and(3).lanewise(VectorOperators.LSHL, 4)).sub(32);
                            int v = 128 * h + 32 * k + c + p * L;
                            FloatVector ds = FloatVector.broadcast(F, d * scale(lo, hi, v / 16));
                            ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(ds).intoArray(dst, e + v);
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
            float d = Simd.fp16(data, o + 208);
            long lo = Simd.u64(data, o + 192);
            long hi = Simd.u64(data, o + 200);
            int xi = xOff + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                for (int k = 0; k < 4; k++) {
                    FloatVector s = FloatVector.zero(F);
                    for (int c = 0; c < 32; c += BL) {
                        // quarter k of half h: low (k < 2) or high nibble of ql[64h + 32(k & 1) + c ..],
                        // bits 2k..2k+1 of qh[32h + c ..] on top, minus 32
                        ByteVector qh = ByteVector.fromMemorySegment(B, data, o + 128 + 32 * h + c, LE);
                        ByteVector ql = ByteVector.fromMemorySegment(B, data, o + 64 * h + 32 * (k & 1) + c, LE);
                        for (int p = 0; p < P; p++) {
                            // bit fields split on int lanes: x86 has no byte-lane shift
                            IntVector high = (IntVector) qh.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                            IntVector q = ((IntVector) ql.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p))
                                    .lanewise(VectorOperators.LSHR, 4 * (k >> 1)).and(0x0F)
                                    .or(high.lanewise(VectorOperators.LSHR, 2 * k).and(3).lanewise(VectorOperators.LSHL, 4)).sub(32);
                            int v = 128 * h + 32 * k + c + p * L;
                            FloatVector ds = FloatVector.broadcast(F, d * scale(lo, hi, v / 16));
                            s = ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(ds).fma(FloatVector.fromArray(F, x, xi + v), s);
                        }
                    }
                    acc = acc.add(s);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}
