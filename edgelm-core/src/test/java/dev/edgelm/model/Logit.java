package dev.edgelm.model;

import dev.edgelm.Fixtures;

/** Comparisons of logits matrices [rows, vocab]. */
public final class Logit {
    private Logit() {}

    public static float maxAbsDiff(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new AssertionError("lengths differ: " + a.length + " vs " + b.length);
        }
        return Fixtures.maxAbsDiff(a, b, 0);
    }

    public static int argmax(float[] v, int row, int vocab) {
        return Fixtures.argmax(v, row * vocab, vocab);
    }

    /** Gap between the largest and second largest logit of a row. */
    public static float topGap(float[] v, int row, int vocab) {
        float first = Float.NEGATIVE_INFINITY;
        float second = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            float x = v[row * vocab + i];
            if (x > first) {
                second = first;
                first = x;
            } else if (x > second) {
                second = x;
            }
        }
        return first - second;
    }

    public static int sameArgmax(float[] a, float[] b, int rows, int vocab) {
        int n = 0;
        for (int r = 0; r < rows; r++) {
            n += argmax(a, r, vocab) == argmax(b, r, vocab) ? 1 : 0;
        }
        return n;
    }

    /** Mean over rows of KL(softmax(ref) || softmax(x)), natural log, computed in double. */
    public static double meanKl(float[] ref, float[] x, int rows, int vocab) {
        double total = 0;
        for (int r = 0; r < rows; r++) {
            double[] p = logSoftmax(ref, r, vocab);
            double[] q = logSoftmax(x, r, vocab);
            double kl = 0;
            for (int i = 0; i < vocab; i++) {
                kl += Math.exp(p[i]) * (p[i] - q[i]);
            }
            total += kl;
        }
        return total / rows;
    }

    private static double[] logSoftmax(float[] v, int row, int vocab) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            max = Math.max(max, v[row * vocab + i]);
        }
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(v[row * vocab + i] - max);
        }
        double lse = max + Math.log(sum);
        double[] out = new double[vocab];
        for (int i = 0; i < vocab; i++) {
            out[i] = v[row * vocab + i] - lse;
        }
        return out;
    }
}
