package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Softmax attention of one query vector over the first {@code visible} positions of a key/value cache:
 * {@code out = softmax(q . k_j * scale) v_j}. Rows of the caches are {@code stride} floats apart and the
 * head's slice starts at {@code headOff}. {@code scores} must hold {@code visible} floats.
 *
 * <p>Scores are computed four keys at a time (four independent FMA chains where one dot product after
 * another waited on each FMA's latency), the exponentials with the vector {@code exp}, and the weighted
 * sum of values in register accumulators, eight vectors of the output at a time, instead of an
 * {@code axpy} per key that loads and stores the whole output. Each score and each output element is
 * summed in the same order as the one-key-at-a-time loops, so only the exponentials round differently.
 */
public final class CausalAttention {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();

    private CausalAttention() {}

    public static void attend(float[] q, int qOff, float[] keys, float[] values, int stride, int headOff, int dim,
            int visible, float scale, float[] scores, float[] out, int oOff) {
        scores(q, qOff, keys, stride, headOff, dim, visible, scale, scores);
        softmax(scores, 0, visible);
        weightedValues(scores, values, stride, headOff, dim, visible, out, oOff);
    }

    /** Query heads per {@link #attendGroup} fast path: the heads of Qwen3.5's KV groups (8/2, 16/4). */
    public static final int GROUP = 4;

    /**
     * The shape of a group of query heads that read the same KV head, the same for every group of a layer:
     * {@code group} query heads of {@code dim} floats, each {@code qStride} floats after the one before; cache rows
     * {@code kvStride} floats apart; scores scaled by {@code scale}.
     */
    public record GroupLayout(int group, int dim, int qStride, int kvStride, float scale) {}

    /**
     * {@link #attend} for the query heads of one group: query h at {@code q[qOff + h * qStride]}, its output at
     * {@code out[oOff + h * dim]}, the KV head's slice at {@code headOff} of each cache row; {@code scores} must
     * hold {@code group * visible} floats. With {@link #GROUP} heads and a head width of a multiple of four
     * vectors, every key and value vector is loaded once for the whole group (16 FMA chains: four heads by four
     * keys, then four heads by four output vectors) instead of once per head; the arithmetic of each head is
     * {@link #attend}'s.
     */
    public static void attendGroup(GroupLayout layout, float[] q, int qOff, float[] keys, float[] values, int headOff,
            int visible, float[] scores, float[] out, int oOff) {
        int group = layout.group();
        int dim = layout.dim();
        int qStride = layout.qStride();
        int stride = layout.kvStride();
        float scale = layout.scale();
        if (group != GROUP || dim % (4 * L) != 0) {
            for (int h = 0; h < group; h++) {
                attend(q, qOff + h * qStride, keys, values, stride, headOff, dim, visible, scale, scores,
                        out, oOff + h * dim);
            }
            return;
        }
        groupScores(q, qOff, qStride, keys, stride, headOff, dim, visible, scale, scores);
        for (int h = 0; h < GROUP; h++) {
            softmax(scores, h * visible, visible);
        }
        groupWeightedValues(scores, values, stride, headOff, dim, visible, out, oOff);
    }

    /** {@code scores[h * visible + j]} for four heads, four keys at a time. */
    private static void groupScores(float[] q, int qOff, int qStride, float[] keys, int stride, int headOff,
            int dim, int visible, float scale, float[] scores) {
        int q0 = qOff;
        int q1 = q0 + qStride;
        int q2 = q1 + qStride;
        int q3 = q2 + qStride;
        int j = 0;
        for (; j + 4 <= visible; j += 4) {
            int k0 = j * stride + headOff;
            int k1 = k0 + stride;
            int k2 = k1 + stride;
            int k3 = k2 + stride;
            FloatVector a00 = FloatVector.zero(F), a01 = FloatVector.zero(F), a02 = FloatVector.zero(F), a03 = FloatVector.zero(F);
            FloatVector a10 = FloatVector.zero(F), a11 = FloatVector.zero(F), a12 = FloatVector.zero(F), a13 = FloatVector.zero(F);
            FloatVector a20 = FloatVector.zero(F), a21 = FloatVector.zero(F), a22 = FloatVector.zero(F), a23 = FloatVector.zero(F);
            FloatVector a30 = FloatVector.zero(F), a31 = FloatVector.zero(F), a32 = FloatVector.zero(F), a33 = FloatVector.zero(F);
            for (int i = 0; i < dim; i += L) {
                FloatVector c0 = FloatVector.fromArray(F, keys, k0 + i);
                FloatVector c1 = FloatVector.fromArray(F, keys, k1 + i);
                FloatVector c2 = FloatVector.fromArray(F, keys, k2 + i);
                FloatVector c3 = FloatVector.fromArray(F, keys, k3 + i);
                FloatVector x = FloatVector.fromArray(F, q, q0 + i);
                a00 = x.fma(c0, a00);
                a01 = x.fma(c1, a01);
                a02 = x.fma(c2, a02);
                a03 = x.fma(c3, a03);
                x = FloatVector.fromArray(F, q, q1 + i);
                a10 = x.fma(c0, a10);
                a11 = x.fma(c1, a11);
                a12 = x.fma(c2, a12);
                a13 = x.fma(c3, a13);
                x = FloatVector.fromArray(F, q, q2 + i);
                a20 = x.fma(c0, a20);
                a21 = x.fma(c1, a21);
                a22 = x.fma(c2, a22);
                a23 = x.fma(c3, a23);
                x = FloatVector.fromArray(F, q, q3 + i);
                a30 = x.fma(c0, a30);
                a31 = x.fma(c1, a31);
                a32 = x.fma(c2, a32);
                a33 = x.fma(c3, a33);
            }
            int s1 = visible;
            int s2 = 2 * visible;
            int s3 = 3 * visible;
            scores[j] = a00.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 1] = a01.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 2] = a02.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 3] = a03.reduceLanes(VectorOperators.ADD) * scale;
            scores[s1 + j] = a10.reduceLanes(VectorOperators.ADD) * scale;
            scores[s1 + j + 1] = a11.reduceLanes(VectorOperators.ADD) * scale;
            scores[s1 + j + 2] = a12.reduceLanes(VectorOperators.ADD) * scale;
            scores[s1 + j + 3] = a13.reduceLanes(VectorOperators.ADD) * scale;
            scores[s2 + j] = a20.reduceLanes(VectorOperators.ADD) * scale;
            scores[s2 + j + 1] = a21.reduceLanes(VectorOperators.ADD) * scale;
            scores[s2 + j + 2] = a22.reduceLanes(VectorOperators.ADD) * scale;
            scores[s2 + j + 3] = a23.reduceLanes(VectorOperators.ADD) * scale;
            scores[s3 + j] = a30.reduceLanes(VectorOperators.ADD) * scale;
            scores[s3 + j + 1] = a31.reduceLanes(VectorOperators.ADD) * scale;
            scores[s3 + j + 2] = a32.reduceLanes(VectorOperators.ADD) * scale;
            scores[s3 + j + 3] = a33.reduceLanes(VectorOperators.ADD) * scale;
        }
        for (; j < visible; j++) {
            int k = j * stride + headOff;
            for (int h = 0; h < GROUP; h++) {
                scores[h * visible + j] = VectorMath.dot(q, qOff + h * qStride, keys, k, dim) * scale;
            }
        }
    }

    /** {@code out[h * dim ..] = sum_j p[h * visible + j] v_j} for four heads, four output vectors at a time. */
    private static void groupWeightedValues(float[] p, float[] values, int stride, int headOff, int dim,
            int visible, float[] out, int oOff) {
        int s1 = visible;
        int s2 = 2 * visible;
        int s3 = 3 * visible;
        for (int i = 0; i < dim; i += 4 * L) {
            FloatVector o00 = FloatVector.zero(F), o01 = FloatVector.zero(F), o02 = FloatVector.zero(F), o03 = FloatVector.zero(F);
            FloatVector o10 = FloatVector.zero(F), o11 = FloatVector.zero(F), o12 = FloatVector.zero(F), o13 = FloatVector.zero(F);
            FloatVector o20 = FloatVector.zero(F), o21 = FloatVector.zero(F), o22 = FloatVector.zero(F), o23 = FloatVector.zero(F);
            FloatVector o30 = FloatVector.zero(F), o31 = FloatVector.zero(F), o32 = FloatVector.zero(F), o33 = FloatVector.zero(F);
            for (int j = 0; j < visible; j++) {
                int v = j * stride + headOff + i;
                FloatVector v0 = FloatVector.fromArray(F, values, v);
                FloatVector v1 = FloatVector.fromArray(F, values, v + L);
                FloatVector v2 = FloatVector.fromArray(F, values, v + 2 * L);
                FloatVector v3 = FloatVector.fromArray(F, values, v + 3 * L);
                FloatVector w = FloatVector.broadcast(F, p[j]);
                o00 = v0.fma(w, o00);
                o01 = v1.fma(w, o01);
                o02 = v2.fma(w, o02);
                o03 = v3.fma(w, o03);
                w = FloatVector.broadcast(F, p[s1 + j]);
                o10 = v0.fma(w, o10);
                o11 = v1.fma(w, o11);
                o12 = v2.fma(w, o12);
                o13 = v3.fma(w, o13);
                w = FloatVector.broadcast(F, p[s2 + j]);
                o20 = v0.fma(w, o20);
                o21 = v1.fma(w, o21);
                o22 = v2.fma(w, o22);
                o23 = v3.fma(w, o23);
                w = FloatVector.broadcast(F, p[s3 + j]);
                o30 = v0.fma(w, o30);
                o31 = v1.fma(w, o31);
                o32 = v2.fma(w, o32);
                o33 = v3.fma(w, o33);
            }
            int b0 = oOff + i;
            int b1 = b0 + dim;
            int b2 = b1 + dim;
            int b3 = b2 + dim;
            o00.intoArray(out, b0);
            o01.intoArray(out, b0 + L);
            o02.intoArray(out, b0 + 2 * L);
            o03.intoArray(out, b0 + 3 * L);
            o10.intoArray(out, b1);
            o11.intoArray(out, b1 + L);
            o12.intoArray(out, b1 + 2 * L);
            o13.intoArray(out, b1 + 3 * L);
            o20.intoArray(out, b2);
            o21.intoArray(out, b2 + L);
            o22.intoArray(out, b2 + 2 * L);
            o23.intoArray(out, b2 + 3 * L);
            o30.intoArray(out, b3);
            o31.intoArray(out, b3 + L);
            o32.intoArray(out, b3 + 2 * L);
            o33.intoArray(out, b3 + 3 * L);
        }
    }

    private static void scores(float[] q, int qOff, float[] keys, int stride, int headOff, int dim, int visible,
            float scale, float[] scores) {
        int bound = F.loopBound(dim);
        int j = 0;
        for (; j + 4 <= visible && bound == dim; j += 4) {
            int k0 = j * stride + headOff;
            int k1 = k0 + stride;
            int k2 = k1 + stride;
            int k3 = k2 + stride;
            FloatVector a0 = FloatVector.zero(F);
            FloatVector a1 = FloatVector.zero(F);
            FloatVector a2 = FloatVector.zero(F);
            FloatVector a3 = FloatVector.zero(F);
            for (int i = 0; i < dim; i += L) {
                FloatVector x = FloatVector.fromArray(F, q, qOff + i);
                a0 = x.fma(FloatVector.fromArray(F, keys, k0 + i), a0);
                a1 = x.fma(FloatVector.fromArray(F, keys, k1 + i), a1);
                a2 = x.fma(FloatVector.fromArray(F, keys, k2 + i), a2);
                a3 = x.fma(FloatVector.fromArray(F, keys, k3 + i), a3);
            }
            scores[j] = a0.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 1] = a1.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 2] = a2.reduceLanes(VectorOperators.ADD) * scale;
            scores[j + 3] = a3.reduceLanes(VectorOperators.ADD) * scale;
        }
        for (; j < visible; j++) {
            scores[j] = VectorMath.dot(q, qOff, keys, j * stride + headOff, dim) * scale;
        }
    }

    /** {@code scores[off .. off+n)} replaced by their softmax. */
    private static void softmax(float[] scores, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = off; j < off + n; j++) {
            max = Math.max(max, scores[j]);
        }
        int bound = F.loopBound(n);
        FloatVector sums = FloatVector.zero(F);
        int j = 0;
        for (; j < bound; j += L) {
            FloatVector e = FloatVector.fromArray(F, scores, off + j).sub(max).lanewise(VectorOperators.EXP);
            e.intoArray(scores, off + j);
            sums = sums.add(e);
        }
        float sum = sums.reduceLanes(VectorOperators.ADD);
        for (; j < n; j++) {
            float e = (float) Math.exp(scores[off + j] - max);
            scores[off + j] = e;
            sum += e;
        }
        VectorMath.scale(scores, off, n, 1f / sum);
    }

    /** {@code out = sum_j p_j v_j}, eight vectors of the output held in registers across all the keys. */
    private static void weightedValues(float[] p, float[] values, int stride, int headOff, int dim, int visible,
            float[] out, int oOff) {
        int i = 0;
        for (; i + 8 * L <= dim; i += 8 * L) {
            FloatVector o0 = FloatVector.zero(F), o1 = FloatVector.zero(F), o2 = FloatVector.zero(F);
            FloatVector o3 = FloatVector.zero(F), o4 = FloatVector.zero(F), o5 = FloatVector.zero(F);
            FloatVector o6 = FloatVector.zero(F), o7 = FloatVector.zero(F);
            for (int j = 0; j < visible; j++) {
                FloatVector w = FloatVector.broadcast(F, p[j]);
                int v = j * stride + headOff + i;
                o0 = FloatVector.fromArray(F, values, v).fma(w, o0);
                o1 = FloatVector.fromArray(F, values, v + L).fma(w, o1);
                o2 = FloatVector.fromArray(F, values, v + 2 * L).fma(w, o2);
                o3 = FloatVector.fromArray(F, values, v + 3 * L).fma(w, o3);
                o4 = FloatVector.fromArray(F, values, v + 4 * L).fma(w, o4);
                o5 = FloatVector.fromArray(F, values, v + 5 * L).fma(w, o5);
                o6 = FloatVector.fromArray(F, values, v + 6 * L).fma(w, o6);
                o7 = FloatVector.fromArray(F, values, v + 7 * L).fma(w, o7);
            }
            o0.intoArray(out, oOff + i);
            o1.intoArray(out, oOff + i + L);
            o2.intoArray(out, oOff + i + 2 * L);
            o3.intoArray(out, oOff + i + 3 * L);
            o4.intoArray(out, oOff + i + 4 * L);
            o5.intoArray(out, oOff + i + 5 * L);
            o6.intoArray(out, oOff + i + 6 * L);
            o7.intoArray(out, oOff + i + 7 * L);
        }
        if (i < dim) {
            java.util.Arrays.fill(out, oOff + i, oOff + dim, 0f);
            for (int j = 0; j < visible; j++) {
                VectorMath.axpy(p[j], values, j * stride + headOff + i, out, oOff + i, dim - i);
            }
        }
    }
}
