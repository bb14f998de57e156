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
        softmax(scores, visible);
        weightedValues(scores, values, stride, headOff, dim, visible, out, oOff);
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

    /** {@code scores[0..n)} replaced by their softmax. */
    private static void softmax(float[] scores, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) {
            max = Math.max(max, scores[j]);
        }
        int bound = F.loopBound(n);
        FloatVector sums = FloatVector.zero(F);
        int j = 0;
        for (; j < bound; j += L) {
            FloatVector e = FloatVector.fromArray(F, scores, j).sub(max).lanewise(VectorOperators.EXP);
            e.intoArray(scores, j);
            sums = sums.add(e);
        }
        float sum = sums.reduceLanes(VectorOperators.ADD);
        for (; j < n; j++) {
            float e = (float) Math.exp(scores[j] - max);
            scores[j] = e;
            sum += e;
        }
        VectorMath.scale(scores, 0, n, 1f / sum);
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
