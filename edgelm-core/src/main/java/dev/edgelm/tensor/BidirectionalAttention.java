package dev.edgelm.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Full (non-causal) multi-head attention over one segment of rows: every query sees every key of the segment.
 *
 * <p>Both products are the project's tiled GEMM ({@link WeightMatrix#matmul}, split over the pool): per head, the
 * keys [n, dim] act as the matrix and a block of queries as the activations, giving the block's scores against
 * every key; after the softmax, the values transposed [dim, n] act as the matrix and the probabilities as the
 * activations. Memory stays bounded: queries go in blocks of at most {@link #MAX_SCORES} / n rows (at least
 * {@link #MIN_BLOCK}), so the scores of a block, never the n x n matrix of a head, are held at once (4 MiB blocks:
 * all of a 1024-patch image, 256 queries of a 16384-patch one). A first version with its own register-tiled
 * loops (four queries sharing each key load) reached an eighth of the GEMM's speed.
 */
public final class BidirectionalAttention {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    /** Floats of scores held at once. */
    static final int MAX_SCORES = 1 << 20;
    static final int MIN_BLOCK = 64;

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
        int dim = layout.headDim();
        int stride = layout.rowStride();
        int block = Math.min(n, Math.max(MIN_BLOCK, MAX_SCORES / n));
        float[] keys = new float[n * dim];
        float[] valuesT = new float[dim * n];
        float[] queries = new float[block * dim];
        float[] scores = new float[block * n];
        float[] sums = new float[block];
        float[] heads = new float[block * dim];
        WeightMatrix k = new F32Matrix(MemorySegment.ofArray(keys), n, dim);
        WeightMatrix vt = new F32Matrix(MemorySegment.ofArray(valuesT), dim, n);
        Activations in = new Activations();
        for (int h = 0; h < layout.heads(); h++) {
            int kOff = layout.kOffset() + h * dim;
            int vOff = layout.vOffset() + h * dim;
            pool.forRange(n, 1, 2L * n * dim, (s0, s1) -> {
                for (int s = s0; s < s1; s++) {
                    int row = (start + s) * stride;
                    System.arraycopy(x, row + kOff, keys, s * dim, dim);
                    for (int d = 0; d < dim; d++) {
                        valuesT[d * n + s] = x[row + vOff + d];
                    }
                }
            });
            int qOff = layout.qOffset() + h * dim;
            for (int q0 = 0; q0 < n; q0 += block) {
                int rows = Math.min(block, n - q0);
                int first = q0;
                for (int r = 0; r < rows; r++) {
                    System.arraycopy(x, (start + first + r) * stride + qOff, queries, r * dim, dim);
                }
                PackedGemm.matmul(pool, k, in.set(queries, rows, dim), scores);
                pool.forRange(rows, 1, 8L * rows * n, (r0, r1) -> {
                    for (int r = r0; r < r1; r++) {
                        sums[r] = expInPlace(scores, r * n, n, scale);
                    }
                });
                PackedGemm.matmul(pool, vt, in.set(scores, rows, n), heads);
                int o = layout.outWidth();
                int hOff = h * dim;
                pool.forRange(rows, 1, (long) rows * dim, (r0, r1) -> {
                    for (int r = r0; r < r1; r++) {
                        float inv = 1f / sums[r];
                        int dst = (start + first + r) * o + hOff;
                        for (int d = 0; d < dim; d++) {
                            out[dst + d] = heads[r * dim + d] * inv;
                        }
                    }
                });
            }
        }
    }

    /** {@code a[off .. off+n)} scaled, then replaced by {@code exp(a - max)}; returns their sum (the softmax's divisor). */
    private static float expInPlace(float[] a, int off, int n, float scale) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = off; j < off + n; j++) {
            a[j] *= scale;
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
