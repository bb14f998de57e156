package dev.edgelm.model;

import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.VectorMath;

/** {@code y = x / sqrt(mean(x^2) + eps) * scale}, in float32, over rows of width {@code scale.length}. */
final class RmsNorm {
    private RmsNorm() {}

    static void apply(float[] x, int xOff, float[] scale, float eps, float[] out, int outOff) {
        int n = scale.length;
        float inv = inverseRms(x, xOff, n, eps);
        for (int i = 0; i < n; i++) {
            out[outOff + i] = x[xOff + i] * inv * scale[i];
        }
    }

    static float inverseRms(float[] x, int off, int n, float eps) {
        float meanSquare = VectorMath.sumOfSquares(x, off, n) / n;
        return (float) (1.0 / Math.sqrt(meanSquare + eps));
    }

    /**
     * The residual add and the norm after it, row by row: {@code x += residual}, then {@code out = norm(x)}.
     * One pass over each row where two passes over all rows read x back from L2 or beyond.
     */
    static void addThenRows(Parallel pool, float[] residual, float[] x, int rows, float[] scale, float eps,
            float[] out) {
        int w = scale.length;
        pool.forRange(rows, 1, 4L * rows * w, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                VectorMath.add(residual, r * w, x, r * w, w);
                apply(x, r * w, scale, eps, out, r * w);
            }
        });
    }

    /** Applies the norm to each of {@code rows} rows of width {@code scale.length}, rows split between threads. */
    static void rows(Parallel pool, float[] x, int rows, float[] scale, float eps, float[] out) {
        int w = scale.length;
        pool.forRange(rows, 1, 3L * rows * w, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                apply(x, r * w, scale, eps, out, r * w);
            }
        });
    }
}
