package dev.edgelm.tensor;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Full (non-causal) multi-head attention over one segment of rows: every query sees every key of the segment.
 *
 * <p>Memory stays linear in the segment: queries go in tiles of {@link #QUERY_TILE}, so a thread holds the scores
 * of one tile against all keys ({@code QUERY_TILE x n} floats), never the {@code n x n} matrix of a head. Keys are
 * packed transposed per head ({@code [dim][n]}) so that the scores of four queries are vector FMAs along the keys,
 * one key load shared by four queries; the weighted sum of values runs along the head dimension, one value load
 * shared by four queries. Work items are (head, query tile) pairs spread over the pool.
 */
public final class BidirectionalAttention {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    /** Queries per work item. */
    public static final int QUERY_TILE = 32;
    private static final int GROUP = 4;
    private static final Scratch.Floats SCORES = new Scratch.Floats();

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
        int heads = layout.heads();
        int dim = layout.headDim();
        int padded = (n + L - 1) / L * L;
        float[] keysT = new float[heads * dim * padded];
        float[] values = new float[heads * n * dim];
        pool.forRange(heads * n, 1, 2L * heads * n * dim, (i0, i1) -> {
            for (int i = i0; i < i1; i++) {
                int h = i / n;
                int s = i % n;
                int row = (start + s) * layout.rowStride();
                int k = row + layout.kOffset() + h * dim;
                int kt = h * dim * padded + s;
                for (int d = 0; d < dim; d++) {
                    keysT[kt + d * padded] = x[k + d];
                }
                System.arraycopy(x, row + layout.vOffset() + h * dim, values, (h * n + s) * dim, dim);
            }
        });
        int tiles = (n + QUERY_TILE - 1) / QUERY_TILE;
        pool.forRange(heads * tiles, 1, 4L * heads * n * n * dim, (i0, i1) -> {
            float[] scores = SCORES.get(QUERY_TILE * padded + QUERY_TILE);
            for (int i = i0; i < i1; i++) {
                int h = i / tiles;
                int q0 = (i % tiles) * QUERY_TILE;
                int q1 = Math.min(n, q0 + QUERY_TILE);
                tile(x, layout, start, n, padded, h, q0, q1, scale, keysT, values, scores, out);
            }
        });
    }

    private static void tile(float[] x, Layout layout, int start, int n, int padded, int h, int q0, int q1, float scale,
                             float[] keysT, float[] values, float[] scores, float[] out) {
        int dim = layout.headDim();
        int kBase = h * dim * padded;
        int vBase = h * n * dim;
        int sums = QUERY_TILE * padded;
        int[] q = new int[GROUP];
        for (int g = q0; g < q1; g += GROUP) {
            // A short last group repeats its last query; only the real ones are stored.
            for (int i = 0; i < GROUP; i++) {
                q[i] = (start + Math.min(g + i, q1 - 1)) * layout.rowStride() + layout.qOffset() + h * dim;
            }
            int s0 = (g - q0) * padded;
            for (int j = 0; j < padded; j += L) {
                FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
                for (int d = 0; d < dim; d++) {
                    FloatVector k = FloatVector.fromArray(F, keysT, kBase + d * padded + j);
                    a0 = k.fma(FloatVector.broadcast(F, x[q[0] + d]), a0);
                    a1 = k.fma(FloatVector.broadcast(F, x[q[1] + d]), a1);
                    a2 = k.fma(FloatVector.broadcast(F, x[q[2] + d]), a2);
                    a3 = k.fma(FloatVector.broadcast(F, x[q[3] + d]), a3);
                }
                int real = Math.min(GROUP, q1 - g);
                a0.mul(scale).intoArray(scores, s0 + j);
                if (real > 1) a1.mul(scale).intoArray(scores, s0 + padded + j);
                if (real > 2) a2.mul(scale).intoArray(scores, s0 + 2 * padded + j);
                if (real > 3) a3.mul(scale).intoArray(scores, s0 + 3 * padded + j);
            }
        }
        for (int r = 0; r < q1 - q0; r++) {
            scores[sums + r] = expInPlace(scores, r * padded, n);
        }
        int outWidth = layout.outWidth();
        int bound = dim / L * L;
        for (int g = q0; g < q1; g += GROUP) {
            int real = Math.min(GROUP, q1 - g);
            int p0 = (g - q0) * padded;
            int p1 = p0 + (real > 1 ? padded : 0);
            int p2 = p0 + (real > 2 ? 2 * padded : 0);
            int p3 = p0 + (real > 3 ? 3 * padded : 0);
            for (int d = 0; d < bound; d += L) {
                FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
                for (int s = 0; s < n; s++) {
                    FloatVector v = FloatVector.fromArray(F, values, vBase + s * dim + d);
                    a0 = v.fma(FloatVector.broadcast(F, scores[p0 + s]), a0);
                    a1 = v.fma(FloatVector.broadcast(F, scores[p1 + s]), a1);
                    a2 = v.fma(FloatVector.broadcast(F, scores[p2 + s]), a2);
                    a3 = v.fma(FloatVector.broadcast(F, scores[p3 + s]), a3);
                }
                FloatVector[] acc = {a0, a1, a2, a3};
                for (int i = 0; i < real; i++) {
                    acc[i].div(scores[sums + g - q0 + i]).intoArray(out, (start + g + i) * outWidth + h * dim + d);
                }
            }
            for (int i = 0; i < real; i++) {
                int o = (start + g + i) * outWidth + h * dim;
                int p = p0 + i * padded;
                if (bound < dim) {
                    Arrays.fill(out, o + bound, o + dim, 0f);
                    for (int s = 0; s < n; s++) {
                        float w = scores[p + s];
                        for (int d = bound; d < dim; d++) {
                            out[o + d] += w * values[vBase + s * dim + d];
                        }
                    }
                    float inv = 1f / scores[sums + g - q0 + i];
                    for (int d = bound; d < dim; d++) {
                        out[o + d] *= inv;
                    }
                }
            }
        }
    }

    /** {@code a[off .. off+n)} replaced by {@code exp(a - max)}; returns their sum (the softmax's divisor). */
    private static float expInPlace(float[] a, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = off; j < off + n; j++) {
            max = Math.max(max, a[j]);
        }
        FloatVector sums = FloatVector.zero(F);
        int j = 0;
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
