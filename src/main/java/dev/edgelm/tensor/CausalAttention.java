package dev.edgelm.tensor;

/**
 * Softmax attention of one query vector over the first {@code visible} positions of a key/value cache:
 * {@code out = softmax(q . k_j * scale) v_j}. Rows of the caches are {@code stride} floats apart and the
 * head's slice starts at {@code headOff}. {@code scores} must hold {@code visible} floats.
 */
public final class CausalAttention {
    private CausalAttention() {}

    public static void attend(float[] q, int qOff, float[] keys, float[] values, int stride, int headOff, int dim,
            int visible, float scale, float[] scores, float[] out, int oOff) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < visible; j++) {
            float s = VectorMath.dot(q, qOff, keys, j * stride + headOff, dim) * scale;
            scores[j] = s;
            max = Math.max(max, s);
        }
        float sum = 0f;
        for (int j = 0; j < visible; j++) {
            float e = (float) Math.exp(scores[j] - max);
            scores[j] = e;
            sum += e;
        }
        java.util.Arrays.fill(out, oOff, oOff + dim, 0f);
        float inv = 1f / sum;
        for (int j = 0; j < visible; j++) {
            VectorMath.axpy(scores[j] * inv, values, j * stride + headOff, out, oOff, dim);
        }
    }
}
