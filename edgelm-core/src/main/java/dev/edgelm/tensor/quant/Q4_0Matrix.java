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
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * ggml Q4_0: blocks of 32 values, {@code fp16 d} then 16 bytes; byte j holds value j in its low nibble and
 * value j + 16 in its high nibble; value = (nibble - 8) * d. {@link #quantize} is ggml's reference
 * quantiser ({@code quantize_row_q4_0_ref}), bit for bit.
 */
public final class Q4_0Matrix extends Q4LanesMatrix {
    static final int BLOCK = GgmlType.Q4_0.blockSize();
    static final int BLOCK_BYTES = GgmlType.Q4_0.typeSize();

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Whether one-token products (decode) and independent tokens (batched decode) round the activation to int8
     * per block and multiply in 16-bit lanes over a repacked copy of the matrix ({@link Q4Lanes}; default on:
     * 1.64-1.80x the float kernel's rate streamed from memory with AVX-512 and 3.5x with AVX2, on one thread, see
     * docs/kernels.md). {@code -Dedgelm.q4.intdecode=false} keeps the float kernels (to measure one against the other).
     */
    static final boolean INT_DECODE = Boolean.parseBoolean(System.getProperty("edgelm.q4.intdecode", "true"));

    public Q4_0Matrix(MemorySegment data, int rows, int cols) {
        super(GgmlType.Q4_0, Q4Lanes.Format.Q4_0, INT_DECODE, data, rows, cols, 0);
    }

    @Override
    void decodeRowFile(int row, float[] dst, int off) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector d = FloatVector.broadcast(F, Simd.fp16(data, o));
            int e = off + b * BLOCK;
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    ((FloatVector) w.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).mul(d)
                            .intoArray(dst, e + c + p * L);
                    ((FloatVector) w.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                            .mul(d).intoArray(dst, e + 16 + c + p * L);
                }
            }
        }
    }

    /**
     * Decodes row {@code row} to its Q4_0 values as shorts ({@code nibble - 8}, in [-8, 7]) at
     * {@code dst[off..]} and its block scales to {@code scales[sOff..]}, for {@link Q4_0Gemm}.
     */
    void decodeShorts(int row, short[] dst, int off, float[] scales, int sOff) {
        Q4Lanes l = intDecode.copy.readFile(() -> decodeShortsFile(row, dst, off, scales, sOff));
        if (l != null) {
            l.decodeInts(row, dst, off, scales, null, sOff);
        }
    }

    /** {@link #decodeShorts} from the file's bytes. */
    void decodeShortsFile(int row, short[] dst, int off, float[] scales, int sOff) {
        long base = row * rowBytes;
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            scales[sOff + b] = Simd.fp16(data, o);
            ShortVector w = (ShortVector) ByteVector.fromMemorySegment(ByteVector.SPECIES_128, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2S, ShortVector.SPECIES_256, 0);
            int e = off + b * BLOCK;
            w.and((short) 0x0F).sub((short) 8).intoArray(dst, e);
            w.lanewise(VectorOperators.LSHR, 4).sub((short) 8).intoArray(dst, e + 16);
        }
    }

    /** {@link Int8Gemm}'s form of a row: {@link #decodeShorts} (Q4_0 blocks have no bias). */
    @Override
    public void decodeInts(int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        decodeShorts(row, q, off, scale, sOff);
    }

    @Override
    public boolean biased() {
        return false;
    }

    /**
     * Whether prefill (chunks of 16 tokens or more) rounds the activations to int8 blocks as llama.cpp does
     * ({@link Q4_0Gemm} with 16-lane vectors, {@link Int8Gemm} with 8 lanes); chunks of 2-15 tokens
     * multiply float activations, and decode (one token, or independent tokens) rounds them too ({@link #INT_DECODE}).
     */
    public static boolean roundsPrefillActivations() {
        return Q4_0Gemm.ENABLED || Int8Gemm.ENABLED;
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
        if (Int8Gemm.takes(in.tokens())) {
            Int8Gemm.matmul(this, pool, in, out, outStride, outOff);
            return;
        }
        if (Q4_0Gemm.takes(in.tokens())) {
            Q4_0Gemm.matmul(this, pool, in, out, outStride, outOff);
            return;
        }
        super.multiply(pool, in, out, outStride, outOff);
    }

    @Override
    protected float dot(int row, float[] x, int xOff, float[] xSums) {
        if (INT_DECODE) {
            // dotRow: the decode products' arithmetic (rounded activation, integer sums), so that it agrees with them
            return intDecode.dotRow(row, x, xOff);
        }
        return dotFloat(row, x, xOff);
    }

    /** The float kernel: the weights converted to float, float activations. */
    float dotFloat(int row, float[] x, int xOff) {
        if (K8) {
            return dot8(row, x, xOff);
        }
        long base = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            int xi = xOff + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < 16; c += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, data, o + 2 + c, LE);
                for (int p = 0; p < P; p++) {
                    IntVector w = (IntVector) q.convertShape(VectorOperators.ZERO_EXTEND_B2I, I, p);
                    FloatVector lo = (FloatVector) w.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0);
                    FloatVector hi = (FloatVector) w.lanewise(VectorOperators.LSHR, 4).sub(8)
                            .convertShape(VectorOperators.I2F, F, 0);
                    int i = xi + c + p * L;
                    s = lo.fma(FloatVector.fromArray(F, x, i), s);
                    s = hi.fma(FloatVector.fromArray(F, x, i + 16), s);
                }
            }
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * The 8-lane (AVX2) shape written out: a block is two 8-byte loads widened to int lanes (values 0..7 and
     * 8..15 in the low nibbles, 16..23 and 24..31 in the high ones), the four products summed in one chain,
     * then one multiply-add with the block's scale; lanes summed by {@link Simd#sum}.
     */
    private float dot8(int row, float[] x, int xOff) {
        long o = row * rowBytes;
        FloatVector acc = FloatVector.zero(F);
        int end = xOff + cols;
        for (int e = xOff; e < end; e += BLOCK, o += BLOCK_BYTES) {
            IntVector a = (IntVector) ByteVector.fromMemorySegment(B, data, o + 2, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector b = (IntVector) ByteVector.fromMemorySegment(B, data, o + 10, LE)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            FloatVector s = ((FloatVector) a.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, e));
            s = ((FloatVector) b.and(0x0F).sub(8).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, e + 8), s);
            s = ((FloatVector) a.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                    .fma(FloatVector.fromArray(F, x, e + 16), s);
            s = ((FloatVector) b.lanewise(VectorOperators.LSHR, 4).sub(8).convertShape(VectorOperators.I2F, F, 0))
                    .fma(FloatVector.fromArray(F, x, e + 24), s);
            acc = s.fma(FloatVector.broadcast(F, Simd.fp16(data, o)), acc);
        }
        return Simd.sum(acc);
    }

    /**
     * Independent tokens (batched decode): {@link Q4Lanes}, each token's result the one-token product's bit for bit
     * (with {@link #INT_DECODE} off, each token through {@link #dotFloat}).
     */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (INT_DECODE) {
            intDecode.multiply(pool, in, out, outStride, outOff);
            return;
        }
        super.multiplyEach(pool, in, out, outStride, outOff);
    }

    /**
     * Quantises {@code src[srcOff .. srcOff+count)} into {@code count / 32} Q4_0 blocks at {@code dst[dstOff..]},
     * exactly as ggml's {@code quantize_row_q4_0_ref}: {@code max} is the value of largest magnitude (the
     * first one on ties), {@code d = max / -8}, nibble = {@code min(15, (int8)(x * (1/d) + 8.5f))},
     * {@code d} stored as fp16 rounded to nearest even.
     */
    public static void quantize(float[] src, int srcOff, int count, MemorySegment dst, long dstOff) {
        if (count % BLOCK != 0) {
            throw new IllegalArgumentException("Q4_0 quantises whole blocks of " + BLOCK + " values, got " + count);
        }
        for (int b = 0; b < count / BLOCK; b++) {
            int s = srcOff + b * BLOCK;
            long o = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0f;
            float max = 0f;
            for (int j = 0; j < BLOCK; j++) {
                float v = src[s + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -8;
            float id = d != 0f ? 1f / d : 0f;
            dst.set(Simd.LE_SHORT, o, Float.floatToFloat16(d));
            for (int j = 0; j < 16; j++) {
                int lo = Math.min(15, (byte) (int) (src[s + j] * id + 8.5f)) & 0xFF;
                int hi = Math.min(15, (byte) (int) (src[s + 16 + j] * id + 8.5f)) & 0xFF;
                dst.set(ValueLayout.JAVA_BYTE, o + 2 + j, (byte) (lo | hi << 4));
            }
        }
    }
}
