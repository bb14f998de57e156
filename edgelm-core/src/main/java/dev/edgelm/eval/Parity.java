package dev.edgelm.eval;

import java.util.ArrayList;
import java.util.List;

/**
 * Logit parity of two [T, vocab] matrices (a reference and the model under test), as the model cards tabulate
 * it: per position and overall, top-1 agreement, top-5 overlap, Pearson correlation, KL(reference || test) of
 * the softmaxes, and the largest absolute difference.
 */
public final class Parity {
    private Parity() {}

    /**
     * @param top5 |top-5(reference) ∩ top-5(test)| / 5
     */
    public record Position(int position, int refTop, int top, double top5, double pearson, double kl, double maxAbsDiff) {}

    public record Result(List<Position> positions, double top1, double top5, double pearson, double meanKl, double maxKl,
                         double maxAbsDiff) {}

    public static Result compare(float[] ref, float[] test, int rows, int vocab) {
        if (ref.length != (long) rows * vocab || test.length != (long) rows * vocab) {
            throw new IllegalArgumentException("logits of " + ref.length + " / " + test.length + " values for " + rows + " x " + vocab);
        }
        List<Position> out = new ArrayList<>();
        double agree = 0;
        double overlap = 0;
        double klSum = 0;
        double klMax = 0;
        double maxAbs = 0;
        double[] all = new double[5]; // sums of x, y, xx, yy, xy over every value
        for (int t = 0; t < rows; t++) {
            int off = t * vocab;
            int[] a = topK(ref, off, vocab, 5);
            int[] b = topK(test, off, vocab, 5);
            int common = 0;
            for (int x : a) {
                for (int y : b) {
                    if (x == y) {
                        common++;
                    }
                }
            }
            double[] s = new double[5];
            double diff = 0;
            for (int i = 0; i < vocab; i++) {
                double x = ref[off + i];
                double y = test[off + i];
                s[0] += x;
                s[1] += y;
                s[2] += x * x;
                s[3] += y * y;
                s[4] += x * y;
                diff = Math.max(diff, Math.abs(x - y));
            }
            for (int k = 0; k < 5; k++) {
                all[k] += s[k];
            }
            double kl = kl(ref, test, off, vocab);
            out.add(new Position(t, a[0], b[0], common / 5.0, pearson(s, vocab), kl, diff));
            agree += a[0] == b[0] ? 1 : 0;
            overlap += common / 5.0;
            klSum += kl;
            klMax = Math.max(klMax, kl);
            maxAbs = Math.max(maxAbs, diff);
        }
        return new Result(out, agree / rows, overlap / rows, pearson(all, (long) rows * vocab), klSum / rows, klMax, maxAbs);
    }

    private static double pearson(double[] s, long n) {
        double cov = s[4] - s[0] * s[1] / n;
        double vx = s[2] - s[0] * s[0] / n;
        double vy = s[3] - s[1] * s[1] / n;
        return vx <= 0 || vy <= 0 ? (vx == vy ? 1 : 0) : cov / Math.sqrt(vx * vy);
    }

    /** KL(p || q) of the softmaxes of two logit rows, in double. */
    static double kl(float[] p, float[] q, int off, int vocab) {
        double lp = logSumExp(p, off, vocab);
        double lq = logSumExp(q, off, vocab);
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            double a = p[off + i] - lp;
            double b = q[off + i] - lq;
            sum += Math.exp(a) * (a - b);
        }
        return Math.max(0, sum);
    }

    private static double logSumExp(float[] v, int off, int n) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, v[off + i]);
        }
        double s = 0;
        for (int i = 0; i < n; i++) {
            s += Math.exp(v[off + i] - max);
        }
        return max + Math.log(s);
    }

    /** Indices of the k largest values, largest first (ties: lower index first). */
    static int[] topK(float[] v, int off, int n, int k) {
        int m = Math.min(k, n);
        int[] idx = new int[m];
        java.util.Arrays.fill(idx, -1);
        for (int i = 0; i < n; i++) {
            float x = v[off + i];
            int pos = m;
            while (pos > 0 && (idx[pos - 1] < 0 || x > v[off + idx[pos - 1]])) {
                pos--;
            }
            if (pos < m) {
                System.arraycopy(idx, pos, idx, pos + 1, m - pos - 1);
                idx[pos] = i;
            }
        }
        return idx;
    }
}
