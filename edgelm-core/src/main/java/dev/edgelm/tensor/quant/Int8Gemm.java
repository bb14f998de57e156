package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.FloatGemm;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
import dev.edgelm.tensor.StageClock;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Prefill for 4-bit weights (Q4_0, Q4_K) on machines with 8-lane float vectors (AVX2), with the activations rounded
 * to int8 per token and block of 32 ({@link Activations#int8Panels}, ggml's Q8_0 rule) as llama.cpp multiplies
 * them, and 16-bit integer products: {@link Q4_0Gemm}'s arithmetic on 256-bit vectors.
 *
 * <p>Why, when the products are no faster: on the Zen 3 host a 16-bit multiply issues once per cycle, 16
 * multiply-adds, the rate of its two 256-bit FMA pipes (probes, one core, 1024 columns, 16 tokens, CPU time: the
 * float 6-row tile 54-58 GFLOP/s, this tile's loop 57-60). What the integer form saves is traffic and decoding: int8
 * panels are half the bytes of float ones and a row becomes shorts with one subtraction per value, no conversion
 * and multiply. Whole 3584 x 1024 x 256 matmuls on one thread: Q4_0 50 against the float path's 41 GFLOP per
 * CPU-second, Q4_K 61 against 54 (docs/lab/prefill.md, round 2). Measured again, Q4_K lost to the float 6-row tile
 * (Zen 3, quiet: 48.9 against 74.8; a Zen 5 under {@code -XX:UseAVX=2}: 84-102 against 98-118), so Q4_K takes this
 * kernel only with {@code -Dedgelm.q4k.int8gemm=true} ({@link Q4_KMatrix#INT8_PREFILL}); Q4_0 keeps it.
 *
 * <p>A block's weights are small integers {@code q} with a scale and a bias, {@code value = scale * q + bias}
 * ({@link Int8Rows}): Q4_0 is {@code d * (nibble - 8)}; Q4_K is {@code d * sc * nibble - dmin * m}, i.e. {@code q =
 * nibble - 8}, {@code scale = d * sc}, {@code bias = 8 * d * sc - dmin * m}. With {@code |q| <= 8} and {@code
 * |x| <= 127} a block's 32 products sum to at most 32,512 and fit a 16-bit lane. Per block and token the dot
 * product is {@code scale * (xd * sum(q * xq)) + bias * (xd * sum(xq))}, the second factor from {@link
 * Activations#int8Sums}.
 *
 * <p>The tile: 4 rows by 16 tokens (one panel, one short vector), per column one activation load, and per row a
 * 16-bit broadcast, multiply and add; every 32 columns the 16-bit sums are widened to floats (even tokens {@code
 * (v << 16) >> 16}, odd tokens {@code v >> 16} of the 32-bit lanes, in the order of {@link
 * Activations#int8Scales}) and scaled into 8 float accumulators: 4 + 8 + 2 vector registers of AVX2's 16.
 * {@code -Dedgelm.q4.int8act=false} keeps these formats on the float path.
 */
final class Int8Gemm {
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_256;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    private static final int L = F.length();
    /** Tokens per panel: one short vector (the float panels' width on 8-lane machines). */
    static final int PANEL = 16;
    /** Weight rows per tile. */
    static final int ROWS = 4;
    static final int BLOCK = Activations.BLOCK;
    /** Chunks of at least this many tokens are multiplied here (shorter ones would be mostly padding). */
    static final int MIN_TOKENS = 16;

    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("edgelm.q4.int8act", "true"))
            && FloatVector.SPECIES_PREFERRED.length() == L && FloatGemm.PANEL == PANEL
            && !Boolean.getBoolean("edgelm.gemm.legacy");

    /** A weight format whose rows decode to small integers per block of 32, {@code value = scale * q + bias}. */
    interface Int8Rows {
        /**
         * Row {@code row}'s integers ({@code |q| <= 8}) to {@code q[off ..]}, and per block b its scale and bias to
         * {@code scale[sOff + b]} and {@code bias[sOff + b]} (bias untouched when the format has none).
         */
        void decodeInts(int row, short[] q, int off, float[] scale, float[] bias, int sOff);

        /** Whether blocks have a bias (else it is 0 and not read). */
        boolean biased();
    }

    private static final Scratch.Shorts TILE_ROWS = new Scratch.Shorts();
    private static final Scratch.Floats TILE_SCALES = new Scratch.Floats();
    private static final Scratch.Floats TILE_BIASES = new Scratch.Floats();
    private static final Scratch.Floats RESULTS = new Scratch.Floats();

    private Int8Gemm() {}

    /** Whether {@code tokens} of one chunk are multiplied here. */
    static boolean takes(int tokens) {
        return ENABLED && tokens >= MIN_TOKENS;
    }

    /** {@code out[t * outStride + outOff + r] = row r . token t of in}, with the tokens rounded to int8 blocks. */
    static <M extends QuantizedMatrix & Int8Rows> void matmul(M m, Parallel pool, Activations in, float[] out,
            int outStride, int outOff) {
        int cols = m.cols();
        int rows = m.rows();
        int n = in.tokens();
        int blocks = cols / BLOCK;
        int panels = in.panelCount();
        boolean biased = m.biased();
        short[] xq = in.int8Panels(pool);
        float[] xd = in.int8Scales();
        float[] xs = in.int8Sums();
        boolean clocked = StageClock.active();
        long wall = clocked ? System.nanoTime() : 0L;
        pool.forRange(rows, ROWS, (long) rows * cols * n, (start, end) -> {
            short[] w = TILE_ROWS.get(ROWS * cols);
            float[] ws = TILE_SCALES.get(ROWS * blocks);
            float[] wb = TILE_BIASES.get(ROWS * blocks);
            float[] tmp = RESULTS.get(ROWS * PANEL);
            long decodeNs = 0;
            long t0 = clocked ? System.nanoTime() : 0L;
            long cpu0 = clocked ? StageClock.cpuNanos() : 0L;
            for (int r = start; r < end; r += ROWS) {
                int count = Math.min(ROWS, end - r);
                long d0 = clocked ? System.nanoTime() : 0L;
                for (int i = 0; i < ROWS; i++) {
                    if (i < count) {
                        m.decodeInts(r + i, w, i * cols, ws, wb, i * blocks);
                    } else {
                        Arrays.fill(w, i * cols, (i + 1) * cols, (short) 0);
                        Arrays.fill(ws, i * blocks, (i + 1) * blocks, 0f);
                        Arrays.fill(wb, i * blocks, (i + 1) * blocks, 0f);
                    }
                }
                if (clocked) {
                    decodeNs += System.nanoTime() - d0;
                }
                for (int p = 0; p < panels; p++) {
                    tile(w, ws, wb, biased, cols, xq, p * PANEL * cols, xd, xs, p * PANEL * blocks, tmp);
                    write(tmp, count, Math.min(PANEL, n - p * PANEL), out, outStride, outOff, r, p * PANEL);
                }
            }
            if (clocked) {
                StageClock.add("gemm.decode (thread sum)", decodeNs);
                StageClock.add("gemm.tile+write (thread sum)", System.nanoTime() - t0 - decodeNs);
                StageClock.add("gemm.cpu (thread sum)", StageClock.cpuNanos() - cpu0);
            }
        });
        if (clocked) {
            StageClock.add("gemm " + rows + "x" + cols + " int8 wall", System.nanoTime() - wall);
        }
    }

    /**
     * A tile's results ({@code tmp[i * PANEL + lane]}, even tokens in lanes 0..7, odd ones in 8..15) to rows
     * {@code r0 + i < r0 + valid} of tokens {@code t0 + j}, token by token (a token's rows are adjacent).
     */
    private static void write(float[] tmp, int valid, int tokens, float[] out, int outStride, int outOff, int r0,
            int t0) {
        for (int j = 0; j < tokens; j++) {
            int o = (t0 + j) * outStride + outOff + r0;
            int lane = (j >> 1) + (j & 1) * L;
            for (int i = 0; i < valid; i++) {
                out[o + i] = tmp[i * PANEL + lane];
            }
        }
    }

    /**
     * {@link #ROWS} rows of integers ({@code w}, back to back, {@code cols} each; per row and block a scale in
     * {@code ws} and a bias in {@code wb}, {@code cols / 32} per row) against one panel of int8 activations
     * ({@code xq[xqOff + k * PANEL + j]}; scales and sums at {@code xd[xdOff + b * PANEL ..]}, {@code xs[..]}).
     * Writes {@code tmp[row * PANEL + lane]}: lanes 0..7 the even tokens, 8..15 the odd ones.
     */
    static void tile(short[] w, float[] ws, float[] wb, boolean biased, int cols, short[] xq, int xqOff, float[] xd,
            float[] xs, int xdOff, float[] tmp) {
        int blocks = cols / BLOCK;
        FloatVector f00 = FloatVector.zero(F), f01 = FloatVector.zero(F);
        FloatVector f10 = FloatVector.zero(F), f11 = FloatVector.zero(F);
        FloatVector f20 = FloatVector.zero(F), f21 = FloatVector.zero(F);
        FloatVector f30 = FloatVector.zero(F), f31 = FloatVector.zero(F);
        int c1 = cols, c2 = 2 * cols, c3 = 3 * cols;
        for (int b = 0; b < blocks; b++) {
            ShortVector s0 = ShortVector.zero(S);
            ShortVector s1 = ShortVector.zero(S);
            ShortVector s2 = ShortVector.zero(S);
            ShortVector s3 = ShortVector.zero(S);
            int k0 = b * BLOCK;
            for (int k = k0; k < k0 + BLOCK; k++) {
                ShortVector x = ShortVector.fromArray(S, xq, xqOff + k * PANEL);
                s0 = s0.add(x.mul(w[k]));
                s1 = s1.add(x.mul(w[c1 + k]));
                s2 = s2.add(x.mul(w[c2 + k]));
                s3 = s3.add(x.mul(w[c3 + k]));
            }
            int dOff = xdOff + b * PANEL;
            FloatVector d0 = FloatVector.fromArray(F, xd, dOff);
            FloatVector d1 = FloatVector.fromArray(F, xd, dOff + L);
            float e;
            e = ws[b];
            f00 = ((FloatVector) s0.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f00);
            f01 = ((FloatVector) s0.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f01);
            e = ws[1 * blocks + b];
            f10 = ((FloatVector) s1.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f10);
            f11 = ((FloatVector) s1.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f11);
            e = ws[2 * blocks + b];
            f20 = ((FloatVector) s2.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f20);
            f21 = ((FloatVector) s2.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f21);
            e = ws[3 * blocks + b];
            f30 = ((FloatVector) s3.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f30);
            f31 = ((FloatVector) s3.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f31);
        }
        if (biased) {
            // The blocks' biases times their activation sums, in a loop of their own: inside the loop above they
            // would need three more live vectors than AVX2's 16.
            for (int b = 0; b < blocks; b++) {
                int dOff = xdOff + b * PANEL;
                FloatVector x0 = FloatVector.fromArray(F, xs, dOff);
                FloatVector x1 = FloatVector.fromArray(F, xs, dOff + L);
                float e;
                e = wb[b];
                f00 = x0.fma(FloatVector.broadcast(F, e), f00);
                f01 = x1.fma(FloatVector.broadcast(F, e), f01);
                e = wb[1 * blocks + b];
                f10 = x0.fma(FloatVector.broadcast(F, e), f10);
                f11 = x1.fma(FloatVector.broadcast(F, e), f11);
                e = wb[2 * blocks + b];
                f20 = x0.fma(FloatVector.broadcast(F, e), f20);
                f21 = x1.fma(FloatVector.broadcast(F, e), f21);
                e = wb[3 * blocks + b];
                f30 = x0.fma(FloatVector.broadcast(F, e), f30);
                f31 = x1.fma(FloatVector.broadcast(F, e), f31);
            }
        }
        f00.intoArray(tmp, 0 * PANEL);
        f01.intoArray(tmp, 0 * PANEL + L);
        f10.intoArray(tmp, 1 * PANEL);
        f11.intoArray(tmp, 1 * PANEL + L);
        f20.intoArray(tmp, 2 * PANEL);
        f21.intoArray(tmp, 2 * PANEL + L);
        f30.intoArray(tmp, 3 * PANEL);
        f31.intoArray(tmp, 3 * PANEL + L);
    }
}
