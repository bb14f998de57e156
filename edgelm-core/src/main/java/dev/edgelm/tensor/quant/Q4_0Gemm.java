package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.FloatGemm;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
import dev.edgelm.tensor.StageClock;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Prefill for Q4_0 weights with the activations rounded to int8, the way llama.cpp multiplies Q4_0: each
 * token's activations are quantised per block of 32 like ggml's Q8_0 ({@link Activations#int8Panels}), and
 * each block's dot product is an exact integer sum scaled by {@code d_weight * d_activation}.
 *
 * <p>Why integers: a Q4_0 value is in [-8, 7] and an activation in [-127, 127], so one block's 32 products
 * sum to at most 32,512 in magnitude and fit a 16-bit lane. The kernel is the same outer product as
 * {@link FloatGemm}'s panel kernel (tokens along the lanes, one weight broadcast per row and column) on
 * 32 lanes of shorts: a 16-bit multiply and add per 32 multiply-adds, where a float FMA does 16. Measured
 * on one core of this machine (Zen 5), the bare loops run at 146-182 G multiply-adds/s in 16-bit lanes
 * against a float FMA peak of 102 G (the Vector API has no {@code vpdpbusd}/{@code vpmaddwd}, which is
 * what llama.cpp uses; 16-bit products are the widest integer path it compiles to single instructions).
 * Every 32 columns the 16-bit sums are widened to float and scaled into float accumulators: read as 16
 * int lanes, the even tokens' sums are {@code (v << 16) >> 16} and the odd tokens' {@code v >> 16}, two or
 * three integer operations where a sign-extending conversion of each half took a permute, a blend and an
 * extension (tile 270-274 -> 276-281 GFLOP/s on one core); the activation scales come in the same
 * even/odd order ({@link Activations#int8Scales}) and the tile interleaves its results back at the end.
 *
 * <p>Q4_K takes it too ({@link #matmul} over {@link Int8Gemm.Int8Rows}: a scale and a bias per block of 32, the
 * biases times the blocks' activation sums added after the integer part): 233-250 against 189-210 GFLOP per
 * CPU-second for the float 12-row tile, 3584 x 1024 and 1024 x 3584 x 256, one thread (docs/kernels.md).
 *
 * <p>It needs 32 short lanes (512-bit vectors); with 8 float lanes (AVX2) {@link Int8Gemm} does the same on 16-token
 * panels, elsewhere Q4_0 prefill takes the float path. It can be
 * switched off with {@code -Dedgelm.q4.int8act=false} (then Q4_0 prefill multiplies float activations
 * like every other format, as decode always does).
 */
final class Q4_0Gemm {
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorShuffle<Float> INTERLEAVE_LO =
            VectorShuffle.fromValues(F, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    private static final VectorShuffle<Float> INTERLEAVE_HI =
            VectorShuffle.fromValues(F, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    /** Tokens per panel: one short vector. */
    static final int PANEL = 32;
    /** Weight rows per tile. */
    static final int ROWS = 8;
    private static final int BLOCK = GgmlType.Q4_0.blockSize();

    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("edgelm.q4.int8act", "true"))
            && FloatVector.SPECIES_PREFERRED.length() >= 16 && FloatGemm.PANEL == PANEL;

    /** Whether chunks of {@code tokens} are multiplied here (shorter ones than half a panel take the float path). */
    static boolean takes(int tokens) {
        return ENABLED && tokens >= PANEL / 2;
    }

    /** Per thread: a tile's rows as shorts and their scales. */
    private static final Scratch.Shorts TILE_ROWS = new Scratch.Shorts();
    private static final Scratch.Floats TILE_SCALES = new Scratch.Floats();
    private static final Scratch.Floats TILE_BIASES = new Scratch.Floats();

    private Q4_0Gemm() {}

    /**
     * {@code out[t * outStride + outOff + r] = row r . token t of in}, with the tokens rounded to int8 blocks: Q4_0, and
     * every other format whose rows decode to small integers with a scale and a bias per block of 32 ({@link
     * Int8Gemm.Int8Rows}: Q4_K), whose block products are {@code scale * (xd * sum(q * xq)) + bias * (xd * sum(xq))}.
     */
    static <M extends QuantizedMatrix & Int8Gemm.Int8Rows> void matmul(M m, Parallel pool, Activations in, float[] out,
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
            float[] wd = TILE_SCALES.get(ROWS * blocks);
            float[] wb = TILE_BIASES.get(ROWS * blocks);
            float[] tmp = FloatGemm.tileResults();
            long decodeNs = 0;
            long c0 = clocked ? System.nanoTime() : 0L;
            long cpu0 = clocked ? StageClock.cpuNanos() : 0L;
            int r = start;
            for (; r < end; r += ROWS) {
                int count = Math.min(ROWS, end - r);
                long d0 = clocked ? System.nanoTime() : 0L;
                for (int i = 0; i < ROWS; i++) {
                    if (i < count) {
                        m.decodeInts(r + i, w, i * cols, wd, wb, i * blocks);
                    } else {
                        Arrays.fill(w, i * cols, (i + 1) * cols, (short) 0);
                        Arrays.fill(wd, i * blocks, (i + 1) * blocks, 0f);
                        Arrays.fill(wb, i * blocks, (i + 1) * blocks, 0f);
                    }
                }
                if (clocked) {
                    decodeNs += System.nanoTime() - d0;
                }
                for (int p = 0; p < panels; p++) {
                    tile(w, wd, wb, biased, cols, xq, p * PANEL * cols, xd, xs, p * PANEL * blocks, tmp);
                    int t0 = p * PANEL;
                    FloatGemm.writeTile(tmp, count, Math.min(PANEL, n - t0), out, outStride, outOff, r, t0);
                }
            }
            if (clocked) {
                StageClock.add("gemm.decode (thread sum)", decodeNs);
                StageClock.add("gemm.tile+write (thread sum)", System.nanoTime() - c0 - decodeNs);
                StageClock.add("gemm.cpu (thread sum)", StageClock.cpuNanos() - cpu0);
            }
        });
        if (clocked) {
            StageClock.add("gemm " + rows + "x" + cols + " int8 wall", System.nanoTime() - wall);
        }
    }

    /**
     * {@link #ROWS} rows of Q4_0 values as shorts ({@code w}, back to back, {@code cols} each; their fp16
     * scales as floats in {@code wd}, {@code cols / 32} per row) against one panel of int8 activations.
     * Per column: one 32-token activation vector, one broadcast weight per row, a 16-bit multiply and add
     * per row; per block of 32 columns the 16-bit sums are widened and scaled into float accumulators.
     * Writes {@code tmp[row * PANEL + token]}.
     */
    static void tile(short[] w, float[] wd, float[] wb, boolean biased, int cols, short[] xq, int xqOff, float[] xd,
            float[] xs, int xdOff, float[] tmp) {
        int blocks = cols / BLOCK;
        int half = F.length();
        FloatVector f00 = FloatVector.zero(F), f01 = FloatVector.zero(F);
        FloatVector f10 = FloatVector.zero(F), f11 = FloatVector.zero(F);
        FloatVector f20 = FloatVector.zero(F), f21 = FloatVector.zero(F);
        FloatVector f30 = FloatVector.zero(F), f31 = FloatVector.zero(F);
        FloatVector f40 = FloatVector.zero(F), f41 = FloatVector.zero(F);
        FloatVector f50 = FloatVector.zero(F), f51 = FloatVector.zero(F);
        FloatVector f60 = FloatVector.zero(F), f61 = FloatVector.zero(F);
        FloatVector f70 = FloatVector.zero(F), f71 = FloatVector.zero(F);
        int c1 = cols, c2 = 2 * cols, c3 = 3 * cols, c4 = 4 * cols, c5 = 5 * cols, c6 = 6 * cols, c7 = 7 * cols;
        for (int b = 0; b < blocks; b++) {
            ShortVector s0 = ShortVector.zero(S), s1 = ShortVector.zero(S), s2 = ShortVector.zero(S);
            ShortVector s3 = ShortVector.zero(S), s4 = ShortVector.zero(S), s5 = ShortVector.zero(S);
            ShortVector s6 = ShortVector.zero(S), s7 = ShortVector.zero(S);
            int k0 = b * BLOCK;
            for (int k = k0; k < k0 + BLOCK; k++) {
                ShortVector x = ShortVector.fromArray(S, xq, xqOff + k * PANEL);
                s0 = s0.add(x.mul(w[k]));
                s1 = s1.add(x.mul(w[c1 + k]));
                s2 = s2.add(x.mul(w[c2 + k]));
                s3 = s3.add(x.mul(w[c3 + k]));
                s4 = s4.add(x.mul(w[c4 + k]));
                s5 = s5.add(x.mul(w[c5 + k]));
                s6 = s6.add(x.mul(w[c6 + k]));
                s7 = s7.add(x.mul(w[c7 + k]));
            }
            int dOff = xdOff + b * PANEL;
            FloatVector d0 = FloatVector.fromArray(F, xd, dOff);
            FloatVector d1 = FloatVector.fromArray(F, xd, dOff + half);
            float e;
            e = wd[b];
            f00 = ((FloatVector) s0.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f00);
            f01 = ((FloatVector) s0.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f01);
            e = wd[blocks + b];
            f10 = ((FloatVector) s1.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f10);
            f11 = ((FloatVector) s1.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f11);
            e = wd[2 * blocks + b];
            f20 = ((FloatVector) s2.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f20);
            f21 = ((FloatVector) s2.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f21);
            e = wd[3 * blocks + b];
            f30 = ((FloatVector) s3.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f30);
            f31 = ((FloatVector) s3.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f31);
            e = wd[4 * blocks + b];
            f40 = ((FloatVector) s4.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f40);
            f41 = ((FloatVector) s4.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f41);
            e = wd[5 * blocks + b];
            f50 = ((FloatVector) s5.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f50);
            f51 = ((FloatVector) s5.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f51);
            e = wd[6 * blocks + b];
            f60 = ((FloatVector) s6.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f60);
            f61 = ((FloatVector) s6.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f61);
            e = wd[7 * blocks + b];
            f70 = ((FloatVector) s7.reinterpretAsInts().lanewise(VectorOperators.LSHL, 16)
                    .lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).fma(d0.mul(e), f70);
            f71 = ((FloatVector) s7.reinterpretAsInts().lanewise(VectorOperators.ASHR, 16)
                    .convert(VectorOperators.I2F, 0)).fma(d1.mul(e), f71);
        }
        if (biased) {
            // The blocks' biases times their activation sums, after the integer part, in {@link Int8Gemm}'s order.
            for (int b = 0; b < blocks; b++) {
                int dOff = xdOff + b * PANEL;
                FloatVector x0 = FloatVector.fromArray(F, xs, dOff);
                FloatVector x1 = FloatVector.fromArray(F, xs, dOff + half);
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
                e = wb[4 * blocks + b];
                f40 = x0.fma(FloatVector.broadcast(F, e), f40);
                f41 = x1.fma(FloatVector.broadcast(F, e), f41);
                e = wb[5 * blocks + b];
                f50 = x0.fma(FloatVector.broadcast(F, e), f50);
                f51 = x1.fma(FloatVector.broadcast(F, e), f51);
                e = wb[6 * blocks + b];
                f60 = x0.fma(FloatVector.broadcast(F, e), f60);
                f61 = x1.fma(FloatVector.broadcast(F, e), f61);
                e = wb[7 * blocks + b];
                f70 = x0.fma(FloatVector.broadcast(F, e), f70);
                f71 = x1.fma(FloatVector.broadcast(F, e), f71);
            }
        }
        // Lanes hold even tokens (f_0) and odd tokens (f_1): interleave them back into token order.
        f00.rearrange(INTERLEAVE_LO, f01).intoArray(tmp, 0);
        f00.rearrange(INTERLEAVE_HI, f01).intoArray(tmp, half);
        f10.rearrange(INTERLEAVE_LO, f11).intoArray(tmp, PANEL);
        f10.rearrange(INTERLEAVE_HI, f11).intoArray(tmp, PANEL + half);
        f20.rearrange(INTERLEAVE_LO, f21).intoArray(tmp, 2 * PANEL);
        f20.rearrange(INTERLEAVE_HI, f21).intoArray(tmp, 2 * PANEL + half);
        f30.rearrange(INTERLEAVE_LO, f31).intoArray(tmp, 3 * PANEL);
        f30.rearrange(INTERLEAVE_HI, f31).intoArray(tmp, 3 * PANEL + half);
        f40.rearrange(INTERLEAVE_LO, f41).intoArray(tmp, 4 * PANEL);
        f40.rearrange(INTERLEAVE_HI, f41).intoArray(tmp, 4 * PANEL + half);
        f50.rearrange(INTERLEAVE_LO, f51).intoArray(tmp, 5 * PANEL);
        f50.rearrange(INTERLEAVE_HI, f51).intoArray(tmp, 5 * PANEL + half);
        f60.rearrange(INTERLEAVE_LO, f61).intoArray(tmp, 6 * PANEL);
        f60.rearrange(INTERLEAVE_HI, f61).intoArray(tmp, 6 * PANEL + half);
        f70.rearrange(INTERLEAVE_LO, f71).intoArray(tmp, 7 * PANEL);
        f70.rearrange(INTERLEAVE_HI, f71).intoArray(tmp, 7 * PANEL + half);
    }
}
