package dev.edgelm.engine;

/**
 * The log-probability of a generated token and of the most likely alternatives at its step, from the
 * model's logits before any penalty, temperature or constraint (as llama-server reports them).
 *
 * @param token      the token produced
 * @param logprob    its natural log-probability
 * @param topIds     the most likely token ids at this step, most likely first (ties: lower id first)
 * @param topLogprobs their log-probabilities
 */
public record TokenLogprobs(int token, float logprob, int[] topIds, float[] topLogprobs) {

    /** Log-softmax of {@code logits} for {@code token} and the {@code k} most likely ids (double-precision sums). */
    public static TokenLogprobs of(float[] logits, int token, int k) {
        float max = Float.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += Math.exp(l - max);
        }
        double logZ = max + Math.log(sum);
        int n = Math.min(k, logits.length);
        int[] ids = new int[n];
        float[] lps = new float[n];
        // insertion into a small sorted list: k is at most a few dozen
        int filled = 0;
        for (int i = 0; i < logits.length && n > 0; i++) {
            float l = logits[i];
            if (filled == n && !(l > logits[ids[n - 1]])) {
                continue;
            }
            int at = Math.min(filled, n - 1);
            while (at > 0 && l > logits[ids[at - 1]]) {
                ids[at] = ids[at - 1];
                at--;
            }
            ids[at] = i;
            if (filled < n) {
                filled++;
            }
        }
        for (int i = 0; i < n; i++) {
            lps[i] = (float) (logits[ids[i]] - logZ);
        }
        return new TokenLogprobs(token, (float) (logits[token] - logZ), ids, lps);
    }
}
