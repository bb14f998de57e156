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

/**
 * ggml Q4_K: super-blocks of 256 values, 144 bytes: {@code fp16 d}, {@code fp16 dmin}, 12 bytes of packed
 * 6-bit scales and mins for 8 sub-blocks of 32 ({@link KScales}), then 128 bytes of nibbles. Group g
 * (0..3) is bytes 32g..32g+31: low nibbles are values 64g..64g+31 (sub-block 2g), high nibbles the next 32
 * (sub-block 2g+1). Value = d * scale * q - dmin * min.
 */
public final class Q4_KMatrix extends Q4LanesMatrix {
    static final int BLOCK = GgmlType.Q4_K.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q4_K.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Whether one-token products (decode) and independent tokens (batched decode) round the activation to int8
     * per block of 32 and multiply in 16-bit lanes over a repacked copy ({@link Q4Lanes}, as Q4_0 does:
     * {@link Q4_0Matrix#INT_DECODE}); {@code -Dedgelm.q4k.intdecode=false} keeps the float kernels.
     */
    static final boolean INT_DECODE = Boolean.parseBoolean(System.getProperty("edgelm.q4k.intdecode", "true"));

    public Q4_KMatrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_K, Q4Lanes.Format.Q4_K, INT_DECODE, data, rows, cols, 32);
    }

    @Override
    void decodeRowFile(int row, float[] dst, int off) {
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
                        ((FloatVector) w.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(d1).sub(m1).intoArray(dst, e + c + p * L);
                        ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(d2).sub(m2)
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
        if (INT_DECODE) {
            // dotRow: the decode products' arithmetic (rounded activation, integer sums), so that it agrees with them
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
                        lo = ((FloatVector) w.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, i), lo);
                        hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0))
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
        return Simd.sum(accLo.add(accHi).add(accLo2.add(accHi2))) - offsets;
    }

    /**
     * Whether prefill (chunks of 16 tokens or more) rounds the activations to int8 blocks (32 values, fp16 scale;
     * llama.cpp rounds them for Q4_K to Q8_K, 256-value blocks with a float scale)
     * ({@link Q4_0Gemm} with 16-lane vectors; {@link Int8Gemm} with 8 lanes when asked); chunks of 2-15 tokens
     * multiply float activations, and decode (one token, or independent tokens) rounds them too ({@link #INT_DECODE}).
     */
    public static boolean roundsPrefillActivations() {
        return INT8_PREFILL && (Q4_0Gemm.ENABLED || Int8Gemm.ENABLED);
    }

    /**
     * Whether Q4_K prefill chunks round the activations to int8 and multiply on the integer tiles ({@link Int8Gemm}
     * on 8 lanes, {@link Q4_0Gemm}'s on 16): only with {@code -Dedgelm.q4k.int8gemm=true}. By default they take the
     * float tiles. On 8 lanes the float 6-row tile ran faster alone (3584 x 1024 x 256, one thread, GFLOP per
     * CPU-second, alternating: 74.8 against 48.9 on the Zen 3 host; 98-118 against 84-102 on a Zen 5 restricted to
     * AVX2 with {@code -XX:UseAVX=2}) and level in the whole 0.8B Q4_K_M prefill (the same proxy, alternating, load
     * 2.1-2.5: 193, 191, 182 against 191, 198, 194 tokens/s). On 16 lanes the integer tile wins alone (233-250 against
     * 189-210) but loses in the model: the 0.8B Q4_K_M file, alternating, load 0.6-2.0, prefilled 190 and 244
     * tokens/s with it against 345 and 331 without, and then decoded at 9.4 and 7.1 tokens/s against 27.3 and 25.1
     * (after the integer tile's short-vector code has run, C2 compiles the K-quant decode kernels with boxed
     * vectors: docs/lab/kquant-decode.md).
     */
    static final boolean INT8_PREFILL = Boolean.getBoolean("edgelm.q4k.int8gemm");

    /**
     * {@link Int8Gemm}'s form of a row: per sub-block of 32, {@code q = nibble - 8} (in [-8, 7]), {@code scale = d *
     * sc}, {@code bias = 8 * d * sc - dmin * m}, so that {@code scale * q + bias = d * sc * nibble - dmin * m}.
     */
    @Override
    public void decodeInts(int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        Q4Lanes l = intDecode.copy.readFile(() -> decodeIntsFile(row, q, off, scale, bias, sOff));
        if (l != null) {
            l.decodeInts(row, q, off, scale, bias, sOff);
        }
    }

    /** {@link #decodeInts} from the file's bytes (the copy's values are these, bit for bit). */
    void decodeIntsFile(int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            float d = Simd.fp16(data, o);
            float dmin = Simd.fp16(data, o + 2);
            long sc = KScales.scales(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            long mn = KScales.mins(Simd.u64(data, o + 4), Simd.u32(data, o + 12));
            int s = sOff + 8 * b;
            for (int j = 0; j < 8; j++) {
                float e = d * KScales.at(sc, j);
                scale[s + j] = e;
                bias[s + j] = 8 * e - dmin * KScales.at(mn, j);
            }
            int e = off + b * BLOCK;
            for (int g = 0; g < 4; g++) {
                // group g: 32 bytes, low nibbles are sub-block 2g, high nibbles sub-block 2g + 1
                ShortVector w0 = (ShortVector) ByteVector.fromMemorySegment(ByteVector.SPECIES_128, data,
                        o + 16 + 32 * g, LE).convertShape(VectorOperators.ZERO_EXTEND_B2S, ShortVector.SPECIES_256, 0);
                ShortVector w1 = (ShortVector) ByteVector.fromMemorySegment(ByteVector.SPECIES_128, data,
                        o + 32 + 32 * g, LE).convertShape(VectorOperators.ZERO_EXTEND_B2S, ShortVector.SPECIES_256, 0);
                int at = e + 64 * g;
                w0.and((short) 0x0F).sub((short) 8).intoArray(q, at);
                w1.and((short) 0x0F).sub((short) 8).intoArray(q, at + 16);
                w0.lanewise(VectorOperators.LSHR, 4).sub((short) 8).intoArray(q, at + 32);
                w1.lanewise(VectorOperators.LSHR, 4).sub((short) 8).intoArray(q, at + 48);
            }
        }
    }

    @Override
    public boolean biased() {
        return true;
    }

    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE && in.tokens() == 1) {
            intDecode.multiply(pool, in, out, outStride, outOff);
            return;
        }
        if (INT_DECODE) {
            // the copy before the first prefill chunk, so that prefill's decoders read it (and the file can be released)
            intDecode.lanes(pool);
        }
        if (INT8_PREFILL && Int8Gemm.takes(in.tokens())) {
            Int8Gemm.matmul(this, pool, in, out, outStride, outOff);
            return;
        }
        if (INT8_PREFILL && Q4_0Gemm.takes(in.tokens())) {
            Q4_0Gemm.matmul(this, pool, in, out, outStride, outOff);
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
     * The 8-lane (AVX2) shape, over activations {@linkplain Q8_0Matrix#interleave interleaved} in runs of 32:
     * per super-block the 8 scales and 8 mins are unpacked as two int vectors ({@link KScales#SHIFT8}),
     * converted once and multiplied by {@code d} and {@code dmin}; the mins meet the 8 run sums of x in one
     * multiply-add. A group of 32 nibble bytes (two sub-blocks) is one 256-bit load of eight 32-bit words,
     * as {@link Q8_0Matrix}'s kernel reads a block: nibble j of every word (byte j / 2, low or high half)
     * comes down to the lane's low bits by a shift and a mask (7 + 7 integer operations per 64 values, where
     * four widening loads with a mask and a shift each took 12 and four loads), and the low nibbles are
     * sub-block 2g in the interleaved order of x, the high ones sub-block 2g + 1. Each sub-block's products
     * are summed on one chain and scaled by its lane of the scale vector, broadcast by a constant shuffle
     * (lanes 0 and 1; the vector is rotated by two lanes per group, so the shuffles stay constants in a
     * loop that C2 keeps small).
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
            for (int g = 0; g < 4; g++) {
                IntVector w = IntVector.fromMemorySegment(I, data, o + 16 + 32 * g, LE);
                int v = e + 64 * g;
                FloatVector lo = ((FloatVector) w.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, xi, v));
                FloatVector hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .mul(FloatVector.fromArray(F, xi, v + 32));
                lo = ((FloatVector) w.lanewise(VectorOperators.LSHR, 8).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 8), lo);
                hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 12).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 40), hi);
                lo = ((FloatVector) w.lanewise(VectorOperators.LSHR, 16).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 16), lo);
                hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 20).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 48), hi);
                lo = ((FloatVector) w.lanewise(VectorOperators.LSHR, 24).and(0x0F).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 24), lo);
                hi = ((FloatVector) w.lanewise(VectorOperators.LSHR, 28).convertShape(VectorOperators.I2F, F, 0))
                        .fma(FloatVector.fromArray(F, xi, v + 56), hi);
                acc0 = lo.fma(scales.rearrange(LANE0_8), acc0);
                acc1 = hi.fma(scales.rearrange(LANE1_8), acc1);
                scales = scales.rearrange(ROTATE2_8);
            }
        }
        return Simd.sum(acc0.add(acc1)) - Simd.sum(accMin);
    }

    /**
     * The 16-lane (AVX-512) shape written out. Per super-block, the 8 mins and 8 scales are unpacked from
     * their 12 bytes in one int vector (lanes 0..7 the mins, 8..15 the scales: two constant permutes, a
     * per-lane shift and masks, see {@link KScales#PICK_LOW}) and converted once, times {@code dmin} and {@code d}; each
     * sub-block's scale is then broadcast from its lane by a constant shuffle, and the mins meet the run
     * sums of x in one multiply-add per super-block (lanes 8..15 of that product are never summed). The
     * four groups of 32 nibble bytes are spelled out so that every lane index is a constant, and they
     * alternate between two pairs of accumulators.
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
            int xi = xOff + b * BLOCK;
            accMin = sm.fma(FloatVector.fromArray(F, xSums, 8 * b), accMin);
            { // group 0: sub-blocks 0 (low nibbles) and 1 (high)
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 16, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 32, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 32));
                lo = ((FloatVector) w1.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 16), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 48), hi);
                acc0 = lo.fma(sm.rearrange(LANE8), acc0);
                acc1 = hi.fma(sm.rearrange(LANE9), acc1);
            }
            { // group 1: sub-blocks 2 and 3
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 48, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 64, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 64));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 96));
                lo = ((FloatVector) w1.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 80), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 112), hi);
                acc2 = lo.fma(sm.rearrange(LANE10), acc2);
                acc3 = hi.fma(sm.rearrange(LANE11), acc3);
            }
            { // group 2: sub-blocks 4 and 5
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 80, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 96, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 128));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 160));
                lo = ((FloatVector) w1.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 144), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 176), hi);
                acc0 = lo.fma(sm.rearrange(LANE12), acc0);
                acc1 = hi.fma(sm.rearrange(LANE13), acc1);
            }
            { // group 3: sub-blocks 6 and 7
                IntVector w0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 112, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector w1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 128, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                FloatVector lo = ((FloatVector) w0.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 192));
                FloatVector hi = ((FloatVector) w0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 224));
                lo = ((FloatVector) w1.and(0x0F).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 208), lo);
                hi = ((FloatVector) w1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, xi + 240), hi);
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
