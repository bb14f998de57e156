package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;

import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * A Q6_K matrix unpacked once into the bytes its 8-lane kernel works on, for decode on AVX2: per super-block of
 * 256 values, the 256 signed values {@code q - 32} as int8, in the order in which {@link Q6_KMatrix}'s 8-lane
 * kernel assembles them in registers (per half super-block, four 32-byte quarters), then the 16 group scales
 * {@code d * sc} as floats (exact: an fp16 times an int8 needs at most 19 significant bits). 320 bytes per
 * 256 values (1.25 per weight) against Q6_K's 210 (0.82): the 0.8B output head (248,320 x 1024, 209 MB in
 * Q6_K) takes 318 MB more, the 2B head (x 2048) 636 MB, as long as the model is open.
 *
 * <p>{@link #dot8} is {@code Q6_KMatrix.dot8} without the bit work: per 32 values one 256-bit load, three
 * shifts and three masks, four conversions and four multiply-adds (as Q8_0's kernel), and per quarter one
 * multiply-add with the pair of scales. The float operations and their order are those of
 * {@code Q6_KMatrix.dot8}, and the scale vector holds the same floats ({@code float(sc) * d}), so both give the
 * same bits: a repacked matrix is a drop-in for the original, tested bit for bit.
 */
final class Q6_KRepacked {
    static final int SUPER = Q6_KMatrix.BLOCK;
    /** Bytes per super-block: 256 int8 values, then 16 float scales. */
    static final int BYTES = SUPER + 16 * Float.BYTES;

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final int TOP = 0xFF000000;
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;
    private static final byte LOW4 = 0x0F;
    private static final byte BITS45 = 0x30;
    private static final byte OFFSET = 32;
    private static final VectorShuffle<Float> PAIR0 = pair(0);
    private static final VectorShuffle<Float> PAIR1 = pair(1);
    private static final VectorShuffle<Float> PAIR2 = pair(2);
    private static final VectorShuffle<Float> PAIR3 = pair(3);

    final MemorySegment data;
    final long rowBytes;
    final int cols;

    private Q6_KRepacked(MemorySegment data, long rowBytes, int cols) {
        this.data = data;
        this.rowBytes = rowBytes;
        this.cols = cols;
    }

    /** The repacked copy of {@code q6} (rows split over the pool's threads); 8-lane machines only. */
    static Q6_KRepacked of(Q6_KMatrix q6, Parallel pool) {
        int blocks = q6.cols() / SUPER;
        long rowBytes = (long) blocks * BYTES;
        // native, outside the Java heap (like the model's own bytes), freed when the matrix is unreachable
        MemorySegment out = Arena.ofAuto().allocate(rowBytes * q6.rows(), 64);
        MemorySegment src = q6.storage();
        long srcRow = q6.rowBytes;
        pool.forRange(q6.rows(), 1, (long) q6.rows() * q6.cols(), (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int b = 0; b < blocks; b++) {
                    pack(src, r * srcRow + (long) b * Q6_KMatrix.BLOCK_BYTES, out, r * rowBytes + (long) b * BYTES);
                }
            }
        });
        return new Q6_KRepacked(out, rowBytes, q6.cols());
    }

    /** One super-block: the byte-lane assembly of {@code Q6_KMatrix.dot8}, stored instead of multiplied. */
    private static void pack(MemorySegment src, long o, MemorySegment dst, long p) {
        float d = Simd.fp16(src, o + 208);
        ((FloatVector) ByteVector.fromMemorySegment(B, src, o + 192, LE).convertShape(VectorOperators.B2F, F, 0))
                .mul(d).intoMemorySegment(dst, p + SUPER, LE);
        ((FloatVector) ByteVector.fromMemorySegment(B, src, o + 200, LE).convertShape(VectorOperators.B2F, F, 0))
                .mul(d).intoMemorySegment(dst, p + SUPER + 32, LE);
        for (int h = 0; h < 2; h++) {
            ByteVector qh = ByteVector.fromMemorySegment(B32, src, o + 128 + 32 * h, LE);
            ByteVector la = ByteVector.fromMemorySegment(B32, src, o + 64 * h, LE);
            ByteVector lb = ByteVector.fromMemorySegment(B32, src, o + 64 * h + 32, LE);
            ShortVector qhs = qh.reinterpretAsShorts();
            long q = p + 128 * h;
            la.and(LOW4).or(qhs.lanewise(VectorOperators.LSHL, 4).reinterpretAsBytes().and(BITS45)).sub(OFFSET)
                    .intoMemorySegment(dst, q, LE);
            lb.and(LOW4).or(qhs.lanewise(VectorOperators.LSHL, 2).reinterpretAsBytes().and(BITS45)).sub(OFFSET)
                    .intoMemorySegment(dst, q + 32, LE);
            la.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW4)
                    .or(qh.and(BITS45)).sub(OFFSET).intoMemorySegment(dst, q + 64, LE);
            lb.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW4)
                    .or(qhs.lanewise(VectorOperators.LSHR, 2).reinterpretAsBytes().and(BITS45)).sub(OFFSET)
                    .intoMemorySegment(dst, q + 96, LE);
        }
    }

    /** Bytes of the copy. */
    long byteSize() {
        return data.byteSize();
    }

    /**
     * Row {@code row} times x {@linkplain Q8_0Matrix#interleave interleaved} at {@code xi[xOff ..]}: the same
     * operations in the same order as {@code Q6_KMatrix.dot8}, the values and scales read instead of made.
     */
    float dot8(int row, float[] xi, int xOff) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += SUPER, o += BYTES) {
            for (int h = 0; h < 2; h++) {
                long q = o + 128 * h;
                FloatVector scales = FloatVector.fromMemorySegment(F, data, o + SUPER + 32 * h, LE);
                IntVector w0 = IntVector.fromMemorySegment(I, data, q, LE);
                IntVector w1 = IntVector.fromMemorySegment(I, data, q + 32, LE);
                IntVector w2 = IntVector.fromMemorySegment(I, data, q + 64, LE);
                IntVector w3 = IntVector.fromMemorySegment(I, data, q + 96, LE);
                int v = e + 128 * h;
                FloatVector s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0))
                        .mul(FloatVector.fromArray(F, xi, v));
                FloatVector s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 32));
                FloatVector s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 64));
                FloatVector s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 96));
                s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 8), s0);
                s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 40), s1);
                s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 72), s2);
                s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 104), s3);
                s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 16), s0);
                s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 48), s1);
                s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 80), s2);
                s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 112), s3);
                s0 = ((FloatVector) w0.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xi, v + 24), s0);
                s1 = ((FloatVector) w1.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xi, v + 56), s1);
                s2 = ((FloatVector) w2.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xi, v + 88), s2);
                s3 = ((FloatVector) w3.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xi, v + 120), s3);
                acc0 = s0.fma(scales.rearrange(PAIR0), acc0);
                acc1 = s1.fma(scales.rearrange(PAIR1), acc1);
                acc2 = s2.fma(scales.rearrange(PAIR2), acc2);
                acc3 = s3.fma(scales.rearrange(PAIR3), acc3);
            }
        }
        return Simd.sum8(acc0.add(acc1).add(acc2.add(acc3))) * 0x1p-24f;
    }

    private static VectorShuffle<Float> pair(int k) {
        int[] index = new int[F.length()];
        for (int i = 0; i < index.length; i++) {
            index[i] = Math.min(2 * k + (i < 4 ? 0 : 1), F.length() - 1);
        }
        return VectorShuffle.fromArray(F, index, 0);
    }
}
