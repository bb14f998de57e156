package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Full (non-causal) multi-head attention over one segment of rows: every query sees every key of the segment.
 *
 * <p>Both products run on the 6-row register tile ({@link RegisterTile}), with the roles chosen so that every
 * tile's results are stored as whole vectors, in place:
 *
 * <pre>
 *   scores[q][s] = sum over d of  q[q][d] * k[s][d]     6 query rows broadcast, keys packed [s/P][d][P]
 *   out[q][d]    = sum over s of  p[q][s] * v[s][d]     6 probability rows broadcast, values packed [d/P][s][P]
 * </pre>
 *
 * ({@code P} = {@link FloatGemm#PANEL}, two vectors.) The keys and values of every head are packed once per call
 * (one parallel section; about 2 x patches x width floats, linear in the patches); then one parallel section runs
 * every (head, 6 queries) item to the end: their scores against all keys (6 x patches floats, L1 / L2), the
 * softmax, the weighted sum and the normalised write-out. So memory stays linear in the patches (no n x n block of
 * a head is ever held) and a block of the tower issues two parallel sections, not some seventy.
 *
 * <p>Each score and each output is the same chain of float FMAs in the same order as the previous version (the
 * keys, then the transposed values, as matrices through the GEMM), and the softmax the same sums; the scale now
 * multiplies the queries rather than the scores, which gives the same bits when it is a power of two (heads of 16
 * or 64, as in the released towers) and a rounding apart otherwise. That version lost on short tiles (64-deep scores), scalar write-outs of every tile, the
 * probabilities packed into panels once per query block, and ~6 parallel sections per head; see
 * docs/lab/vision-attention.md.
 */
public final class BidirectionalAttention {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    private static final int P = FloatGemm.PANEL;
    private static final int MR = RegisterTile.MR;
    private static final Scratch.Floats SCORES = new Scratch.Floats();
    private static final Scratch.Floats QUERIES = new Scratch.Floats();
    private static final Scratch.Floats HEADS = new Scratch.Floats();

    private BidirectionalAttention() {}

    /**
     * Where the heads sit in the rows of one array: row r's query head h starts at
     * {@code r * rowStride + qOffset + h * headDim}, likewise keys and values.
     */
    public record Layout(int rowStride, int qOffset, int kOffset, int vOffset, int heads, int headDim) {
        int outWidth() {
            return heads * headDim;
        }
    }

    /**
     * For rows {@code [start, start + n)} of {@code x}: {@code out[r * heads * headDim + h * headDim ..] =
     * softmax(q_rh . k_sh * scale over s) . v_sh}, s over the same rows.
     */
    public static void attend(Parallel pool, float[] x, Layout layout, int start, int n, float scale, float[] out) {
        if (n <= 0) {
            return;
        }
        int dim = layout.headDim();
        int heads = layout.heads();
        int keyPanels = (n + P - 1) / P;
        int nPad = keyPanels * P;
        int dimPanels = (dim + P - 1) / P;
        int dimPad = dimPanels * P;
        int kPerHead = Math.multiplyExact(nPad, dim);
        int vPerHead = Math.multiplyExact(dimPanels * P, n);
        float[] keys = new float[Math.multiplyExact(heads, kPerHead)];
        float[] values = new float[Math.multiplyExact(heads, vPerHead)];
        long t = StageClock.start();
        pool.forRange(heads, 1, 2L * heads * n * dim, (h0, h1) -> {
            for (int h = h0; h < h1; h++) {
                packKeys(x, layout, start, n, h, keys, h * kPerHead);
                packValues(x, layout, start, n, h, values, h * vPerHead);
            }
        });
        t = lap("attention.pack k, v", t);
        int queryTiles = (n + MR - 1) / MR;
        int stride = layout.rowStride();
        int outWidth = layout.outWidth();
        pool.forRange(heads * queryTiles, 1, 4L * heads * n * n * dim, (i0, i1) -> {
            float[] q = QUERIES.get(MR * dim);
            float[] scores = SCORES.get(MR * nPad);
            float[] o = HEADS.get(MR * dimPad);
            float[] sums = new float[MR];
            boolean clocked = StageClock.active();
            long scoreNs = 0, softmaxNs = 0, sumNs = 0;
            for (int item = i0; item < i1; item++) {
                long c0 = clocked ? System.nanoTime() : 0L;
                int h = item / queryTiles;
                int q0 = (item % queryTiles) * MR;
                int valid = Math.min(MR, n - q0);
                int qOff = layout.qOffset() + h * dim;
                for (int i = 0; i < MR; i++) {
                    if (i < valid) {
                        // the scale on the queries, not on each score (a power of two for 16- and 64-wide heads: the same bits)
                        scaleInto(x, (start + q0 + i) * stride + qOff, scale, q, i * dim, dim);
                    } else {
                        java.util.Arrays.fill(q, i * dim, (i + 1) * dim, 0f);
                    }
                }
                int kBase = h * kPerHead;
                for (int p = 0; p < keyPanels; p++) {
                    RegisterTile.multiply(q, 0, dim, dim, keys, kBase + p * P * dim, scores, p * P, nPad);
                }
                long c1 = clocked ? System.nanoTime() : 0L;
                for (int i = 0; i < valid; i++) {
                    sums[i] = expInPlace(scores, i * nPad, n);
                }
                long c2 = clocked ? System.nanoTime() : 0L;
                int vBase = h * vPerHead;
                for (int dp = 0; dp < dimPanels; dp++) {
                    RegisterTile.multiply(scores, 0, nPad, n, values, vBase + dp * P * n, o, dp * P, dimPad);
                }
                for (int i = 0; i < valid; i++) {
                    scaleInto(o, i * dimPad, 1f / sums[i], out, (start + q0 + i) * outWidth + h * dim, dim);
                }
                if (clocked) {
                    long c3 = System.nanoTime();
                    scoreNs += c1 - c0;
                    softmaxNs += c2 - c1;
                    sumNs += c3 - c2;
                }
            }
            if (clocked) {
                StageClock.add("attention.scores (thread sum)", scoreNs);
                StageClock.add("attention.softmax (thread sum)", softmaxNs);
                StageClock.add("attention.weighted sum (thread sum)", sumNs);
            }
        });
        lap("attention.scores, softmax, sum", t);
    }

    /** Head {@code h}'s keys as panels of {@link #P} keys: {@code dst[off + p * P * dim + d * P + j] = k[p * P + j][d]}, zeros past n. */
    private static void packKeys(float[] x, Layout layout, int start, int n, int h, float[] dst, int off) {
        int dim = layout.headDim();
        int kOff = layout.kOffset() + h * dim;
        int stride = layout.rowStride();
        for (int s = 0; s < n; s++) {
            int row = (start + s) * stride + kOff;
            int base = off + (s / P) * P * dim + s % P;
            for (int d = 0; d < dim; d++) {
                dst[base + d * P] = x[row + d];
            }
        }
        // the padding keys stay zero: the array is fresh
    }

    /** Head {@code h}'s values as panels of {@link #P} dimensions: {@code dst[off + dp * P * n + s * P + j] = v[s][dp * P + j]}, zeros past dim. */
    private static void packValues(float[] x, Layout layout, int start, int n, int h, float[] dst, int off) {
        int dim = layout.headDim();
        int vOff = layout.vOffset() + h * dim;
        int stride = layout.rowStride();
        for (int s = 0; s < n; s++) {
            int row = (start + s) * stride + vOff;
            for (int d0 = 0; d0 < dim; d0 += P) {
                System.arraycopy(x, row + d0, dst, off + (d0 / P) * P * n + s * P, Math.min(P, dim - d0));
            }
        }
    }

    /** {@code dst[dOff + i] = src[sOff + i] * f} for {@code i < len}. */
    private static void scaleInto(float[] src, int sOff, float f, float[] dst, int dOff, int len) {
        int i = 0;
        for (; i + L <= len; i += L) {
            FloatVector.fromArray(F, src, sOff + i).mul(f).intoArray(dst, dOff + i);
        }
        for (; i < len; i++) {
            dst[dOff + i] = src[sOff + i] * f;
        }
    }

    private static long lap(String stage, long t0) {
        if (t0 == 0L) {
            return 0L;
        }
        long now = System.nanoTime();
        StageClock.add(stage, now - t0);
        return now;
    }

    /**
     * {@code a[off .. off+n)} replaced by {@code exp(a - max)}; returns their sum (the softmax's divisor). The maximum
     * in four independent vectors: a lane-wise {@code max} with Java's semantics (NaN, -0.0) is several instructions
     * on x86, and one chain of them through the row was the softmax's critical path (16 lanes, one thread, rows of
     * 1024: 0.35-0.41 against 0.53-0.63 ns per value; a maximum is exact, so the same bits).
     */
    static float expInPlace(float[] a, int off, int n) {
        FloatVector m0 = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        FloatVector m1 = m0;
        FloatVector m2 = m0;
        FloatVector m3 = m0;
        int j = 0;
        for (; j + 4 * L <= n; j += 4 * L) {
            m0 = m0.max(FloatVector.fromArray(F, a, off + j));
            m1 = m1.max(FloatVector.fromArray(F, a, off + j + L));
            m2 = m2.max(FloatVector.fromArray(F, a, off + j + 2 * L));
            m3 = m3.max(FloatVector.fromArray(F, a, off + j + 3 * L));
        }
        for (; j + L <= n; j += L) {
            m0 = m0.max(FloatVector.fromArray(F, a, off + j));
        }
        float max = m0.max(m1).max(m2.max(m3)).reduceLanes(VectorOperators.MAX);
        for (; j < n; j++) {
            max = Math.max(max, a[off + j]);
        }
        FloatVector sums = FloatVector.zero(F);
        j = 0;
        for (; j + L <= n; j += L) {
            FloatVector e = FloatVector.fromArray(F, a, off + j).sub(max).lanewise(VectorOperators.EXP);
            e.intoArray(a, off + j);
            sums = sums.add(e);
        }
        float sum = sums.reduceLanes(VectorOperators.ADD);
        for (; j < n; j++) {
            float e = (float) Math.exp(a[off + j] - max);
            a[off + j] = e;
            sum += e;
        }
        return sum;
    }
}
