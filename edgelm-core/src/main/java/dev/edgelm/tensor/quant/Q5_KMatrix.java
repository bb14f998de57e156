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
 * ggml Q5_K: super-blocks of 256 values, 176 bytes: {@code fp16 d}, {@code fp16 dmin}, 12 bytes of packed
 * scales and mins (as Q4_K), 32 bytes {@code qh}, 128 bytes of nibbles laid out as in Q4_K. The fifth bit
 * of value 64g + l is bit 2g of {@code qh[l]}, of value 64g + 32 + l bit 2g + 1.
 * Value = d * scale * q - dmin * min.
 */
public final class Q5_KMatrix extends QuantizedMatrix implements WorkingCopy {
    static final int BLOCK = GgmlType.Q5_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q5_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Whether one-token products (decode, {@code dotRow}) and independent tokens take the integer kernel
     * {@link Q5_KLanes} (activations rounded to int8 per block of 32, 16-bit products over a copy in lanes): with 16
     * float lanes (AVX-512), where it replaces {@link #dot16}, whose compile left vector conversions as calls in about
     * one process in 20 (docs/lab/kquant-decode.md); 16 fresh processes of the 0.8B Q5_K_M file in a row decoded at
     * 20.1-21.9 tokens/s with 267-331 young collections each (the normal count), against 12.8-18.0 for the float
     * kernel alternating with it. {@code -Dedgelm.q5k.intdecode=false} keeps the float kernels. The copy is extra memory
     * (prefill still reads the file's bytes): 30 bytes per 32 values, +345 MiB peak on the 0.8B Q5_K_M.
     */
    static final boolean INT_DECODE = L == 16
            && Boolean.parseBoolean(System.getProperty("edgelm.q5k.intdecode", "true"));

    /** Integer decode on a repacked copy (with {@link #INT_DECODE}); the file's bytes stay, prefill decodes them. */
    private final Q5_KLanes.Decode intDecode;

    public Q5_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q5_K, data, rows, cols, 32);
        this.intDecode = new Q5_KLanes.Decode(data, rows, cols);
    }

    /** A no-op: prefill and {@link #decodeRow} read the file's bytes, so they stay (the copy is extra memory). */
    @Override
    public void releaseFileAfterCopy() {
    }

    @Override
    public void makeCopy(Parallel pool) {
        if (INT_DECODE) {
            intDecode.lanes(pool);
        }
    }

    @Override
    public long releasedBytes() {
        return 0;
    }

    @Override
    public MemorySegment workingStorage() {
        Q5_KLanes l = intDecode.copy.copy();
        return l != null ? l.packed.asReadOnly() : storage();
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
                        ((FloatVector) q.convertShape(VectorOperators.I2F, F, 0)).mul(dj).sub(mj).intoArray(dst, e + c + p * L);
                    }
                }
            }
        }
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        if (INT_DECODE) {
            // the decode products' arithmetic (rounded activation, integer sums), so that dotRow agrees with them
            return intDecode.dotRow(row, x, xOff);
        }
        return dotFloat(row, x, xOff, xSums);
    }

    /** The float kernels: the weights converted to float, float activations ({@code xSums}: x's run sums of 32). */
    float dotFloat(int row, float[] x, int xOff, float[] xSums) {
        if (BL == 16 && P == 1) {
            return dot16(row, x, xOff, xSums);
        }
        if (K8) {
            return dot8(row, Q8_0Matrix.interleave(x, xOff, cols, new float[cols], 0), 0, xSums);
        }
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
                        s = ((FloatVector) q.convertShape(VectorOperators.I2F, F, 0)).fma(dj, mj).fma(FloatVector.fromArray(F, x, xi + c + p * L), s);
                    }
                }
                acc = acc.add(s);
            }
        }
        return Simd.sum(acc);
    }

    /** The 8-lane (AVX2) one-token product: {@link #dot8} for every row ({@link #multiplyInterleaved}). */
    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE && in.tokens() == 1) {
            intDecode.multiply(pool, in, out, outStride, outOff);
            return;
        }
        if (!K8 || in.tokens() != 1) {
            super.multiply(pool, in, out, outStride, outOff);
            return;
        }
        multiplyInterleaved(pool, in, out, outStride, outOff, this::dot8);
    }

    /** Independent tokens on the 8-lane path: {@link #dot8} per row and token ({@link #multiplyInterleaved}). */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE) {
            intDecode.multiply(pool, in, out, outStride, outOff);
            return;
        }
        if (!K8) {
            super.multiplyEach(pool, in, out, outStride, outOff);
            return;
        }
        multiplyInterleaved(pool, in, out, outStride, outOff, this::dot8);
    }

    /**
     * The 8-lane (AVX2) shape, over activations {@linkplain Q8_0Matrix#interleave interleaved} in runs of 32,
     * as {@code Q4_KMatrix.dot8} (scales and mins unpacked as two int vectors, the mins against the run sums
     * of x, each sub-block's scale broadcast by a constant shuffle of a vector rotated by two lanes per
     * group), with the 5-bit values assembled on 32 byte lanes in registers: per group of 32 nibble bytes
     * (two sub-blocks), the nibbles are split by a mask and by a shift of the 16-bit lanes (x86 has no byte
     * shift; the mask drops the bits that crossed from the neighbouring byte), the fifth bits come from the
     * 32 {@code qh} bytes (loaded once per super-block, shifted right by two bits per group so that group g's
     * bits are always bits 0 and 1): ~9 byte-lane operations per 64 values. Each sub-block's 32 bytes are
     * then read as eight 32-bit words, as {@link Q8_0Matrix}'s kernel reads a block: byte j of every word
     * comes down to the lane's low bits by a shift and a mask (6 integer operations per 32 values) and meets
     * x's interleaved run. No scratch memory: the bytes never leave the registers.
     */
    private float dot8(int row, float[] xi, int xOff, float[] xSums) {
        long o = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector accMin = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff, k = 0; e < end; e += BLOCK, o += BLOCK_BYTES, k += 8) {
            IntVector raw0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 4, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector raw1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 8, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector mn = raw1.lanewise(VectorOperators.LSHR, KScales.SHIFT8).and(KScales.MASK_LOW8)
                    .or(raw0.lanewise(VectorOperators.LSHR, 2).and(KScales.MASK_HIGH8));
            IntVector sc = raw0.blend(raw1, KScales.UPPER4).and(KScales.MASK_LOW8)
                    .or(raw0.rearrange(KScales.SPREAD).lanewise(VectorOperators.LSHR, 2).and(KScales.MASK_HIGH8));
            FloatVector scales = ((FloatVector) sc.convertShape(VectorOperators.I2F, F, 0)).mul(Simd.fp16(data, o));
            FloatVector mins = ((FloatVector) mn.convertShape(VectorOperators.I2F, F, 0)).mul(Simd.fp16(data, o + 2));
            accMin = mins.fma(FloatVector.fromArray(F, xSums, k), accMin);
            ShortVector qh = ByteVector.fromMemorySegment(B32, data, o + 16, LE).reinterpretAsShorts();
            for (int g = 0; g < 4; g++) {
                ByteVector qs = ByteVector.fromMemorySegment(B32, data, o + 48 + 32 * g, LE);
                // low nibbles take bit 0 of the shifted qh as their bit 4, high nibbles bit 1
                IntVector wl = qs.and(LOW4).or(qh.lanewise(VectorOperators.LSHL, 4).reinterpretAsBytes().and(BIT4))
                        .reinterpretAsInts();
                IntVector wh = qs.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW4)
                        .or(qh.lanewise(VectorOperators.LSHL, 3).reinterpretAsBytes().and(BIT4)).reinterpretAsInts();
                int v = e + 64 * g;
                FloatVector lo = ((FloatVector) wl.and(0xFF).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, xi, v));
                FloatVector hi = ((FloatVector) wh.and(0xFF).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, xi, v + 32));
                lo = ((FloatVector) wl.lanewise(VectorOperators.LSHR, 8).and(0xFF).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 8), lo);
                hi = ((FloatVector) wh.lanewise(VectorOperators.LSHR, 8).and(0xFF).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 40), hi);
                lo = ((FloatVector) wl.lanewise(VectorOperators.LSHR, 16).and(0xFF).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 16), lo);
                hi = ((FloatVector) wh.lanewise(VectorOperators.LSHR, 16).and(0xFF).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 48), hi);
                lo = ((FloatVector) wl.lanewise(VectorOperators.LSHR, 24).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 24), lo);
                hi = ((FloatVector) wh.lanewise(VectorOperators.LSHR, 24).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 56), hi);
                acc0 = lo.fma(scales.rearrange(LANE0_8), acc0);
                acc1 = hi.fma(scales.rearrange(LANE1_8), acc1);
                scales = scales.rearrange(ROTATE2_8);
                qh = qh.lanewise(VectorOperators.LSHR, 2);
            }
        }
        return Simd.sum(acc0.add(acc1)) - Simd.sum(accMin);
    }

    /**
     * The 16-lane (AVX-512) shape written out, as {@code Q4_KMatrix.dot16} (scales and mins unpacked in one
     * vector, scales broadcast by constant shuffles, the mins against the run sums of x), with the two 16-byte
     * runs of {@code qh} widened once per super-block: group g takes its fifth bits from bits 2g and 2g + 1.
     */
    private float dot16(int row, float[] x, int xOff, float[] xSums) {
        long base = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        FloatVector acc3 = FloatVector.zero(F);
        FloatVector accMin = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            IntVector raw = (IntVector) ByteVector.fromMemorySegment(B, data, o + 4, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector six = raw.rearrange(KScales.PICK_LOW).lanewise(VectorOperators.LSHR, KScales.SHIFT_LOW)
                    .and(KScales.MASK_LOW)
                    .or(raw.rearrange(KScales.PICK_HIGH).lanewise(VectorOperators.LSHR, 2).and(KScales.MASK_HIGH));
            // lanes 0..7: dmin * min, lanes 8..15: d * scale
            FloatVector sm = ((FloatVector) six.convertShape(VectorOperators.I2F, F, 0))
                    .mul(FloatVector.broadcast(F, Simd.fp16(data, o + 2)).blend(Simd.fp16(data, o), KScales.SCALE_LANES));
            accMin = sm.fma(FloatVector.fromArray(F, xSums, 8 * b), accMin);
            int xi = xOff + b * BLOCK;
            IntVector h0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 16, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector h1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 32, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            { // group 0: sub-blocks 0 (low nibbles, fifth bit = bit 0 of qh) and 1 (high, bit 1)
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 48, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 64, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).or(h0.lanewise(VectorOperators.LSHL, 4).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 0));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).or(h0.lanewise(VectorOperators.LSHL, 3).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 32));
                lo = ((FloatVector) w1.and(0x0F).or(h1.lanewise(VectorOperators.LSHL, 4).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 16), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).or(h1.lanewise(VectorOperators.LSHL, 3).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 48), hi);
                acc0 = lo.fma(sm.rearrange(LANE8), acc0);
                acc1 = hi.fma(sm.rearrange(LANE9), acc1);
            }
            { // group 1: sub-blocks 2 (low nibbles, fifth bit = bit 2 of qh) and 3 (high, bit 3)
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 80, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 96, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).or(h0.lanewise(VectorOperators.LSHL, 2).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 64));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).or(h0.lanewise(VectorOperators.LSHL, 1).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 96));
                lo = ((FloatVector) w1.and(0x0F).or(h1.lanewise(VectorOperators.LSHL, 2).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 80), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).or(h1.lanewise(VectorOperators.LSHL, 1).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 112), hi);
                acc2 = lo.fma(sm.rearrange(LANE10), acc2);
                acc3 = hi.fma(sm.rearrange(LANE11), acc3);
            }
            { // group 2: sub-blocks 4 (low nibbles, fifth bit = bit 4 of qh) and 5 (high, bit 5)
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 112, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 128, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).or(h0.and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 128));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).or(h0.lanewise(VectorOperators.LSHR, 1).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 160));
                lo = ((FloatVector) w1.and(0x0F).or(h1.and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 144), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).or(h1.lanewise(VectorOperators.LSHR, 1).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 176), hi);
                acc0 = lo.fma(sm.rearrange(LANE12), acc0);
                acc1 = hi.fma(sm.rearrange(LANE13), acc1);
            }
            { // group 3: sub-blocks 6 (low nibbles, fifth bit = bit 6 of qh) and 7 (high, bit 7)
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 144, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 160, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).or(h0.lanewise(VectorOperators.LSHR, 2).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 192));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).or(h0.lanewise(VectorOperators.LSHR, 3).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, x, xi + 224));
                lo = ((FloatVector) w1.and(0x0F).or(h1.lanewise(VectorOperators.LSHR, 2).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 208), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).or(h1.lanewise(VectorOperators.LSHR, 3).and(0x10)).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, x, xi + 240), hi);
                acc2 = lo.fma(sm.rearrange(LANE14), acc2);
                acc3 = hi.fma(sm.rearrange(LANE15), acc3);
            }
        }
        // Simd.sum's steps written out (same order, same bits) for both sums: C2 does not inline a call into a method
        // this large (NodeCountInliningCutoff) and would box the vectors passed to Simd.sum, allocations per row
        FloatVector v = acc0.add(acc1).add(acc2.add(acc3));
        FloatVector m = FloatVector.zero(F).blend(accMin, KScales.MIN_LANES);
        v = v.add(v.rearrange(Simd.SWAP8));
        m = m.add(m.rearrange(Simd.SWAP8));
        v = v.add(v.rearrange(Simd.SWAP4));
        m = m.add(m.rearrange(Simd.SWAP4));
        v = v.add(v.rearrange(Simd.SWAP2));
        m = m.add(m.rearrange(Simd.SWAP2));
        return v.add(v.rearrange(Simd.SWAP1)).lane(0) - m.add(m.rearrange(Simd.SWAP1)).lane(0);
    }

    // 8 lanes: broadcast lane 0 / lane 1, and rotate down by two lanes (lane i takes lane i + 2).
    private static final VectorShuffle<Float> LANE0_8 = lane(0);
    private static final VectorShuffle<Float> LANE1_8 = lane(1);
    private static final VectorShuffle<Float> ROTATE2_8 = VectorShuffle.fromOp(F, i -> (i + 2) % F.length());
    /** 32 bytes, for the 8-lane kernel's byte-lane work (not used with other shapes). */
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;
    private static final byte LOW4 = 0x0F;
    private static final byte BIT4 = 0x10;

    // Shuffles that broadcast lane j of a 16-lane vector, one constant each: C2 folds a constant shuffle into
    // one permute, but not one read from an array (see Q6_KMatrix).
    private static final VectorShuffle<Float> LANE8 = lane(8);
    private static final VectorShuffle<Float> LANE9 = lane(9);
    private static final VectorShuffle<Float> LANE10 = lane(10);
    private static final VectorShuffle<Float> LANE11 = lane(11);
    private static final VectorShuffle<Float> LANE12 = lane(12);
    private static final VectorShuffle<Float> LANE13 = lane(13);
    private static final VectorShuffle<Float> LANE14 = lane(14);
    private static final VectorShuffle<Float> LANE15 = lane(15);

    private static VectorShuffle<Float> lane(int j) {
        int[] index = new int[F.length()];
        java.util.Arrays.fill(index, Math.min(j, F.length() - 1));
        return VectorShuffle.fromArray(F, index, 0);
    }
}
