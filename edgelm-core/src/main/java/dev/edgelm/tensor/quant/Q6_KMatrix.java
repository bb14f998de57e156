package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.BL;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.K8;
import static dev.edgelm.tensor.quant.Simd.L;
import static dev.edgelm.tensor.quant.Simd.P;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
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
 * ggml Q6_K: super-blocks of 256 values, 210 bytes: 128 bytes {@code ql} (low nibbles), 64 bytes
 * {@code qh} (2-bit high parts), 16 int8 scales (one per 16 values), {@code fp16 d}. Half h (0..1) uses
 * {@code ql[64h..]}, {@code qh[32h..]}, scales {@code 8h..}; for l in 0..31 its values are
 * l: low nibble of ql[l], qh bits 0-1; 32 + l: low nibble of ql[32 + l], bits 2-3; 64 + l: high nibble of
 * ql[l], bits 4-5; 96 + l: high nibble of ql[32 + l], bits 6-7. Value = d * scale * (q - 32).
 */
public final class Q6_KMatrix extends QuantizedMatrix implements WorkingCopy {
    static final int BLOCK = GgmlType.Q6_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q6_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** The top byte of a 32-bit lane. */
    private static final int TOP = 0xFF000000;
    /** Per calling thread: the rounded activations of the current one-token products ({@link #multiplyLanes}). */
    private static final Scratch.Shorts ROUNDED = new Scratch.Shorts();
    private static final Scratch.Floats SCALES = new Scratch.Floats();

    /**
     * Whether one-token products ({@code matmul} of one token, of independent tokens, {@code dotRow}) take the integer
     * kernel {@link Q6_KLanes}: with 16 float lanes (AVX-512), where it measured 2.0x the float kernel it replaced
     * from L2 and 1.16-1.39x streamed (248,320 x 1024), one thread ({@code Q6KLanesCpuTime}). Not on 8 lanes (AVX2):
     * 1.26x from L2 but 0.94x streamed, so {@link #dot8} stays (docs/lab/kquant-decode.md).
     */
    static final boolean INT8 = L == 16;

    /**
     * The rows in {@link Q6_KLanes}'s layout (1.31x the file's bytes), made on the first product or when the loader
     * asks; from then on {@link #decodeRow} (token embeddings of a tied head, prefill) reads it too.
     */
    private final LazyCopy<MemorySegment> copy =
            new LazyCopy<>((pool, released) -> Q6_KLanes.repack(data, rows, cols, Arena.ofAuto(), pool, released));

    public Q6_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q6_K, data, rows, cols, 0);
    }

    private MemorySegment lanes(Parallel pool) {
        return copy.get(pool);
    }

    @Override
    public void releaseFileAfterCopy() {
        if (INT8) {
            copy.releaseFileAfterCopy();
        }
    }

    @Override
    public void makeCopy(Parallel pool) {
        if (INT8) {
            lanes(pool);
        }
    }

    @Override
    public long releasedBytes() {
        return copy.releasedBytes();
    }

    @Override
    public MemorySegment workingStorage() {
        MemorySegment w = copy.copy();
        return w != null ? w.asReadOnly() : storage();
    }

    /** Bytes of the integer kernel's copy, once made (0 before, and without {@link #INT8}). */
    public long laneBytes() {
        MemorySegment w = copy.copy();
        return w == null ? 0 : w.byteSize();
    }

    /**
     * The integer kernel over every token of {@code in} (each one-token, as {@link #dot} computes it): each token
     * rounded to int8 once per call (into the calling thread's scratch arrays, fresh ones in a fused section), then
     * per row and token {@link Q6_KLanes#dot}.
     */
    private void multiplyLanes(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        MemorySegment w = lanes(pool);
        int n = in.tokens();
        float[] x = in.x();
        // a fused section runs after this call returns, beside other matrices' products: arrays of its own then
        boolean fusing = pool.fusing();
        short[] xq = fusing ? new short[n * cols] : ROUNDED.get(n * cols);
        float[] dx = fusing ? new float[n * blocksPerRow] : SCALES.get(n * blocksPerRow);
        for (int t = 0; t < n; t++) {
            Q6_KLanes.quantize(x, t * cols, cols, xq, t * cols, dx, t * blocksPerRow);
        }
        long rb = Q6_KLanes.rowBytes(blocksPerRow);
        int blocks = blocksPerRow;
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int t = 0; t < n; t++) {
                    out[t * outStride + outOff + r] = Q6_KLanes.dot(w, r * rb, blocks, xq, t * cols, dx, t * blocks);
                }
            }
        });
    }

    /** The int8 scale of 16-value group {@code g} (0..15), from the scale bytes read as two words. */
    private static int scale(long lo, long hi, int g) {
        return (byte) ((g < 8 ? lo : hi) >>> 8 * (g & 7));
    }

    /** Per thread: one quarter's 32 values as bytes, between the 256-bit bit-field pass and the widening to floats. */
    private static final ThreadLocal<byte[]> QUARTER = ThreadLocal.withInitial(() -> new byte[32]);

    /** From the copy once it exists ({@link Q6_KLanes#decodeRow}: the same values), else from the file. */
    @Override
    public void decodeRow(int row, float[] dst, int off) {
        MemorySegment w = copy.readFile(() -> decodeRowFile(row, dst, off));
        if (w != null) {
            Q6_KLanes.decodeRow(w, blocksPerRow, row, dst, off);
        }
    }

    /** {@link #decodeRow} from the file's bytes. */
    void decodeRowFile(int row, float[] dst, int off) {
        if (K8) {
            decodeRow8(row, dst, off);
            return;
        }
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
                            ((FloatVector) q.convertShape(VectorOperators.I2F, F, 0)).mul(ds).intoArray(dst, e + v);
                        }
                    }
                }
            }
        }
    }

    /**
     * {@link #decodeRow} on 8 float lanes (AVX2), the same values bit for bit: a quarter's 32 6-bit values are put
     * together on 256-bit words (ql and qh read once per half, bit fields cut on 32-bit lanes and masked per
     * byte, as x86 has no byte-lane shift), stored as 32 bytes, then widened 8 at a time and scaled. The generic
     * loop cuts the fields on int lanes 8 values at a time: 0.86-0.90 ns a value against 0.15-0.25 for Q8_0's
     * rows, one thread (the prefill GEMM decodes each row once per matmul).
     */
    private void decodeRow8(int row, float[] dst, int off) {
        byte[] q = QUARTER.get();
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o + 208);
            long lo = Simd.u64(data, o + 192);
            long hi = Simd.u64(data, o + 200);
            int e = off + b * BLOCK;
            for (int h = 0; h < 2; h++) {
                IntVector ql0 = ByteVector.fromMemorySegment(ByteVector.SPECIES_256, data, o + 64 * h, LE).reinterpretAsInts();
                IntVector ql1 = ByteVector.fromMemorySegment(ByteVector.SPECIES_256, data, o + 64 * h + 32, LE).reinterpretAsInts();
                IntVector qh = ByteVector.fromMemorySegment(ByteVector.SPECIES_256, data, o + 128 + 32 * h, LE).reinterpretAsInts();
                for (int k = 0; k < 4; k++) {
                    // quarter k: low (k < 2) or high nibble of ql[64h + 32(k & 1) ..], bits 2k..2k+1 of qh[32h ..] on top
                    IntVector ql = (k & 1) == 0 ? ql0 : ql1;
                    IntVector v = ql.lanewise(VectorOperators.LSHR, 4 * (k >> 1)).and(0x0F0F0F0F)
                            .or(qh.lanewise(VectorOperators.LSHR, 2 * k).and(0x03030303).lanewise(VectorOperators.LSHL, 4));
                    v.reinterpretAsBytes().sub((byte) 32).intoArray(q, 0);
                    int at = 128 * h + 32 * k;
                    for (int c = 0; c < 32; c += 8) {
                        FloatVector ds = FloatVector.broadcast(F, d * scale(lo, hi, (at + c) / 16));
                        ((FloatVector) ((IntVector) ByteVector.fromArray(ByteVector.SPECIES_64, q, c)
                                .convertShape(VectorOperators.B2I, I, 0)).convertShape(VectorOperators.I2F, F, 0)).mul(ds).intoArray(dst, e + at + c);
                    }
                }
            }
        }
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        if (INT8) {
            short[] xq = new short[cols];
            float[] dx = new float[blocksPerRow];
            Q6_KLanes.quantize(x, xOff, cols, xq, 0, dx, 0);
            return Q6_KLanes.dot(lanes(null), row * Q6_KLanes.rowBytes(blocksPerRow), blocksPerRow, xq, 0, dx, 0);
        }
        if (K8) {
            return dot8(row, Q8_0Matrix.interleave(x, xOff, cols, new float[cols], 0), 0);
        }
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
                            s = ((FloatVector) q.convertShape(VectorOperators.I2F, F, 0)).mul(ds).fma(FloatVector.fromArray(F, x, xi + v), s);
                        }
                    }
                    acc = acc.add(s);
                }
            }
        }
        return Simd.sum(acc);
    }

    /** The 8-lane (AVX2) one-token product: {@link #dot8} for every row ({@link #multiplyInterleaved}). */
    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT8 && in.tokens() == 1) {
            multiplyLanes(pool, in, out, outStride, outOff);
            return;
        }
        if (INT8) {
            // the copy before the first prefill chunk, so that prefill's decodeRow reads it (and the file can be released)
            lanes(pool);
        }
        if (!K8 || in.tokens() != 1) {
            super.multiply(pool, in, out, outStride, outOff);
            return;
        }
        multiplyInterleaved(pool, in, out, outStride, outOff, (row, xi, xOff, xSums) -> dot8(row, xi, xOff));
    }

    /** Independent tokens on the 8-lane path: {@link #dot8} per row and token ({@link #multiplyInterleaved}). */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT8) {
            multiplyLanes(pool, in, out, outStride, outOff);
            return;
        }
        if (!K8) {
            super.multiplyEach(pool, in, out, outStride, outOff);
            return;
        }
        multiplyInterleaved(pool, in, out, outStride, outOff, (row, xi, xOff, xSums) -> dot8(row, xi, xOff));
    }

    /**
     * The 8-lane (AVX2) shape, over activations {@linkplain Q8_0Matrix#interleave interleaved} in runs of 32.
     * The 6-bit values of a half super-block (128 values) are assembled on 32 byte lanes, in registers:
     * {@code ql} and {@code qh} are loaded 32 bytes at a time, the nibbles and 2-bit fields are split by shifts
     * of the 16-bit lanes (x86 has no byte shift; the mask after the shift drops the bits that crossed from
     * the neighbouring byte) and byte masks, and 32 is subtracted on the bytes (~21 byte-lane operations per
     * 128 values). Each 32-byte quarter is then read as eight 32-bit words, as {@link Q8_0Matrix}'s kernel
     * reads a block: byte k of every word is moved to the word's top byte by a shift (the bits below
     * cleared), where the int-to-float conversion reads it as {@code (q - 32) * 2^24}, exactly, and meets
     * x's interleaved run. Lanes 0..3 of a quarter's product then hold its first 16 values, lanes 4..7 the
     * other 16: one multiply-add with the two groups' scales (16 scales converted once per super-block,
     * times {@code d}; the pair spread over the lanes by a constant shuffle) adds it to one of four
     * accumulators. No scratch memory: the bytes never leave the registers.
     *
     * <p>The half super-blocks are a loop, not written out: written out, an earlier 8-lane form (3076 bytes
     * of bytecode) made C1 give up on the method ("out of virtual registers in LIR generator"), and in a
     * model run the tiered policy then left it at tier 2 for minutes. See docs/kernels.md, "Every kernel
     * must compile at every tier".
     */
    private float dot8(int row, float[] xi, int xOff) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            float d = Simd.fp16(data, o + 208);
            FloatVector scales = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, data, o + 192, LE)
                    .convertShape(VectorOperators.B2I, I, 0)).convertShape(VectorOperators.I2F, F, 0)).mul(d);
            FloatVector scales1 = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, data, o + 200, LE)
                    .convertShape(VectorOperators.B2I, I, 0)).convertShape(VectorOperators.I2F, F, 0)).mul(d);
            for (int h = 0; h < 2; h++) {
                ByteVector qh = ByteVector.fromMemorySegment(B32, data, o + 128 + 32 * h, LE);
                ByteVector la = ByteVector.fromMemorySegment(B32, data, o + 64 * h, LE);
                ByteVector lb = ByteVector.fromMemorySegment(B32, data, o + 64 * h + 32, LE);
                ShortVector qhs = qh.reinterpretAsShorts();
                // quarter 0 (values 0..31): low nibbles of la, qh bits 0-1; 1 (32..63): low nibbles of lb,
                // bits 2-3; 2 (64..95): high nibbles of la, bits 4-5; 3 (96..127): high nibbles of lb, bits 6-7
                IntVector w0 = la.and(LOW4).or(qhs.lanewise(VectorOperators.LSHL, 4).reinterpretAsBytes().and(BITS45))
                        .sub(OFFSET).reinterpretAsInts();
                IntVector w1 = lb.and(LOW4).or(qhs.lanewise(VectorOperators.LSHL, 2).reinterpretAsBytes().and(BITS45))
                        .sub(OFFSET).reinterpretAsInts();
                IntVector w2 = la.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW4)
                        .or(qh.and(BITS45)).sub(OFFSET).reinterpretAsInts();
                IntVector w3 = lb.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW4)
                        .or(qhs.lanewise(VectorOperators.LSHR, 2).reinterpretAsBytes().and(BITS45))
                        .sub(OFFSET).reinterpretAsInts();
                int v = e + 128 * h;
                FloatVector s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 24).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, xi, v));
                FloatVector s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 24).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 32));
                FloatVector s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 24).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 64));
                FloatVector s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 24).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 96));
                s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 16).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 8), s0);
                s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 16).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 40), s1);
                s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 16).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 72), s2);
                s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 16).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 104), s3);
                s0 = ((FloatVector) w0.lanewise(VectorOperators.LSHL, 8).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 16), s0);
                s1 = ((FloatVector) w1.lanewise(VectorOperators.LSHL, 8).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 48), s1);
                s2 = ((FloatVector) w2.lanewise(VectorOperators.LSHL, 8).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 80), s2);
                s3 = ((FloatVector) w3.lanewise(VectorOperators.LSHL, 8).and(TOP).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 112), s3);
                s0 = ((FloatVector) w0.and(TOP).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, xi, v + 24), s0);
                s1 = ((FloatVector) w1.and(TOP).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, xi, v + 56), s1);
                s2 = ((FloatVector) w2.and(TOP).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, xi, v + 88), s2);
                s3 = ((FloatVector) w3.and(TOP).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, xi, v + 120), s3);
                // quarter k's groups are 2k and 2k + 1 of the half: lanes 0..3 and 4..7 of its product
                acc0 = s0.fma(scales.rearrange(PAIR0), acc0);
                acc1 = s1.fma(scales.rearrange(PAIR1), acc1);
                acc2 = s2.fma(scales.rearrange(PAIR2), acc2);
                acc3 = s3.fma(scales.rearrange(PAIR3), acc3);
                scales = scales1;
            }
        }
        return Simd.sum(acc0.add(acc1).add(acc2.add(acc3))) * 0x1p-24f;
    }

    // 8 lanes: lanes 0..3 take scale lane 2k, lanes 4..7 lane 2k + 1 (quarter k of a half super-block).
    private static final VectorShuffle<Float> PAIR0 = pair(0);
    private static final VectorShuffle<Float> PAIR1 = pair(1);
    private static final VectorShuffle<Float> PAIR2 = pair(2);
    private static final VectorShuffle<Float> PAIR3 = pair(3);
    /** 32 bytes, for the 8-lane kernel's byte-lane work (not used with other shapes). */
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;
    private static final byte LOW4 = 0x0F;
    private static final byte BITS45 = 0x30;
    private static final byte OFFSET = 32;

    private static VectorShuffle<Float> pair(int k) {
        int[] index = new int[F.length()];
        for (int i = 0; i < index.length; i++) {
            index[i] = Math.min(2 * k + (i < 4 ? 0 : 1), F.length() - 1);
        }
        return VectorShuffle.fromArray(F, index, 0);
    }
}
