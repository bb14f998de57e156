package dev.edgelm.engine;

import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Picks the next token from a logit vector. One sampler serves one generation: it remembers which tokens
 * the context holds and which it has generated, for the penalties. Steps, in this order:
 *
 * <ol>
 *   <li><b>Repetition penalty</b> {@code r} (Hugging Face / CTRL style): for every distinct token in the
 *       <em>context</em> (everything the sequence holds before this generation: the prompt and, in a
 *       multi-turn session, earlier turns) and every token generated so far, {@code l > 0 ? l / r : l * r}.
 *       Applied once per distinct token, however often it occurs.</li>
 *   <li><b>Presence penalty</b> {@code q} (as vLLM and the OpenAI API define it): {@code l -= q} once for
 *       every distinct token <em>generated</em> in this generation (the prompt does not count).</li>
 *   <li><b>Frequency penalty</b> {@code f} (OpenAI's definition): {@code l -= f * c} where {@code c} is how
 *       often this generation produced the token.</li>
 *   <li><b>Constraint</b> ({@link TokenConstraint}, when the options carry one): tokens it does not allow get
 *       {@code -inf}; stop tokens are allowed exactly when {@link TokenConstraint#canStop()}. If nothing is
 *       left, the first stop token is taken (or, without stop tokens, the unconstrained argmax).</li>
 *   <li>If the temperature is 0 or top-k is 1: the argmax of the penalised logits (ties: the lowest id).
 *       Nothing below happens and no random number is drawn.</li>
 *   <li><b>Temperature</b> {@code T}: probabilities {@code softmax(l / T)}.</li>
 *   <li><b>Top-k</b>: only the k tokens with the highest logits remain (ties: lower ids first).</li>
 *   <li><b>Top-p</b> (nucleus): with the remaining tokens sorted by probability (renormalised over them),
 *       keep the smallest prefix whose cumulative probability is {@code >= p}, i.e. token i stays iff the
 *       probability of the tokens before it is {@code < p}; the first token always stays.</li>
 *   <li><b>Min-p</b>: drop every token whose probability is {@code < min_p} times the largest one's.</li>
 *   <li>Draw one of the remaining tokens in proportion to its probability, with a {@link SplittableRandom}
 *       seeded from the options: the same seed, logits and history give the same tokens.</li>
 * </ol>
 *
 * Steps 5-7 match Hugging Face's warpers (temperature, top-k, top-p, min-p in that order); sums are taken
 * in double precision. Buffers are allocated once per sampler and reused at every step.
 */
public final class Sampler {
    private final GenerationOptions options;
    private final int vocab;
    private final SplittableRandom random;
    private final float[] work;
    private final boolean[] inContext;
    private final int[] contextIds;
    private int contextCount;
    private final boolean[] generated;
    private final int[] generatedIds;
    private final int[] generatedCounts;
    private int generatedCount;
    private final TokenConstraint constraint;
    private final int[] stopIds;
    private final float[] stopLogits;
    private long[] keys;
    private double[] weights;

    /** The tokens a step may produce and their probabilities (for inspection and tests). */
    public record Distribution(int[] ids, double[] probabilities) {}

    public Sampler(GenerationOptions options, int vocab, long seed) {
        this.options = options;
        this.vocab = vocab;
        this.random = new SplittableRandom(seed);
        this.work = new float[vocab];
        this.inContext = new boolean[vocab];
        this.contextIds = new int[vocab];
        this.generated = new boolean[vocab];
        this.generatedIds = new int[vocab];
        this.generatedCounts = options.frequencyPenalty() != 0f ? new int[vocab] : null;
        this.constraint = options.constraint() == null ? null : options.constraint().open();
        this.stopIds = options.stopTokenIds();
        this.stopLogits = new float[stopIds.length];
    }

    /** Records tokens of the context (for the repetition penalty). */
    public void observeContext(int[] ids, int from, int to) {
        for (int i = from; i < to; i++) {
            markContext(ids[i]);
        }
    }

    /** Records a token this generation produced. */
    public void accept(int id) {
        markContext(id);
        if (!generated[id]) {
            generated[id] = true;
            generatedIds[generatedCount++] = id;
        }
        if (generatedCounts != null) {
            generatedCounts[id]++;
        }
        if (constraint != null) {
            constraint.accept(id);
        }
    }

    private void markContext(int id) {
        if (!inContext[id]) {
            inContext[id] = true;
            contextIds[contextCount++] = id;
        }
    }

    /** The next token. {@code logits} is left unchanged. */
    public int sample(float[] logits) {
        penalise(logits);
        if (constraint != null && nothingAllowed()) {
            return stopIds.length > 0 ? stopIds[0] : argmax(logits);
        }
        if (options.isGreedy()) {
            return argmaxMasked(work);
        }
        int n = candidates();
        double total = 0;
        for (int i = 0; i < n; i++) {
            total += weights[i];
        }
        double u = random.nextDouble() * total;
        double cumulative = 0;
        for (int i = 0; i < n; i++) {
            cumulative += weights[i];
            if (u < cumulative) {
                return id(keys[i]);
            }
        }
        return id(keys[n - 1]);
    }

    /** The tokens the next {@link #sample} call may return, with their probabilities; draws nothing. */
    public Distribution distribution(float[] logits) {
        penalise(logits);
        if (constraint != null && nothingAllowed()) {
            return new Distribution(new int[] {stopIds.length > 0 ? stopIds[0] : argmax(logits)}, new double[] {1.0});
        }
        if (options.isGreedy()) {
            return new Distribution(new int[] {argmaxMasked(work)}, new double[] {1.0});
        }
        int n = candidates();
        double total = 0;
        for (int i = 0; i < n; i++) {
            total += weights[i];
        }
        int[] ids = new int[n];
        double[] probs = new double[n];
        for (int i = 0; i < n; i++) {
            ids[i] = id(keys[i]);
            probs[i] = weights[i] / total;
        }
        return new Distribution(ids, probs);
    }

    /** The logits after the penalties (a copy; for inspection and tests). */
    float[] penalisedLogits(float[] logits) {
        penalise(logits);
        return work.clone();
    }

    private void penalise(float[] logits) {
        if (logits.length != vocab) {
            throw new IllegalArgumentException("expected " + vocab + " logits, got " + logits.length);
        }
        requireFinite(logits, 0, vocab);
        System.arraycopy(logits, 0, work, 0, vocab);
        float r = options.repetitionPenalty();
        if (r != 1f) {
            for (int i = 0; i < contextCount; i++) {
                int id = contextIds[i];
                float l = work[id];
                work[id] = l > 0 ? l / r : l * r;
            }
        }
        float q = options.presencePenalty();
        if (q != 0f) {
            for (int i = 0; i < generatedCount; i++) {
                work[generatedIds[i]] -= q;
            }
        }
        float f = options.frequencyPenalty();
        if (f != 0f) {
            for (int i = 0; i < generatedCount; i++) {
                int id = generatedIds[i];
                work[id] -= f * generatedCounts[id];
            }
        }
        if (constraint != null) {
            for (int i = 0; i < stopIds.length; i++) {
                stopLogits[i] = stopIds[i] < vocab ? work[stopIds[i]] : Float.NEGATIVE_INFINITY;
            }
            constraint.mask(work);
            boolean stop = constraint.canStop();
            for (int i = 0; i < stopIds.length; i++) {
                if (stopIds[i] < vocab) {
                    work[stopIds[i]] = stop ? stopLogits[i] : Float.NEGATIVE_INFINITY;
                }
            }
        }
    }

    private boolean nothingAllowed() {
        for (float l : work) {
            if (l != Float.NEGATIVE_INFINITY) {
                return false;
            }
        }
        return true;
    }

    /**
     * Refuses logits that are NaN or infinite: they come from broken weights or hyper-parameters, and a token drawn
     * from them would be noise (NaN compares false, so argmax would answer token 0 forever).
     */
    public static void requireFinite(float[] logits, int from, int to) {
        for (int i = from; i < to; i++) {
            if (!Float.isFinite(logits[i])) {
                throw new EdgeLmException("the model computed a non-finite logit (" + logits[i] + " for token " + (i - from)
                        + "): its weights or hyper-parameters are broken (NaN or infinite weights, a bad rms_norm_eps or rope theta)");
            }
        }
    }

    /**
     * {@link #argmax} of the penalised logits: the model's logits were checked finite in {@link #penalise}; a
     * constraint's {@code -inf} marks tokens it forbids.
     */
    private static int argmaxMasked(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Lowest id among the largest values: greedy decoding. Non-finite logits are an error. */
    public static int argmax(float[] v) {
        requireFinite(v, 0, v.length);
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    /**
     * Applies temperature, top-k, top-p and min-p to {@link #work}; leaves the survivors in
     * {@code keys[0..n)} (most likely first when top-k or top-p sorted them) with their unnormalised
     * probabilities in {@code weights[0..n)}, and returns n.
     */
    private int candidates() {
        if (keys == null) {
            keys = new long[vocab];
            weights = new double[vocab];
        }
        double invT = 1.0 / options.temperature();
        int k = options.topK();
        int n;
        boolean sorted = false;
        if (k > 0 && k < vocab) {
            n = selectTopK(k);
            Arrays.sort(keys, 0, n);
            sorted = true;
        } else {
            for (int i = 0; i < vocab; i++) {
                keys[i] = key(work[i], i);
            }
            n = vocab;
        }
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, logit(keys[i]));
        }
        // weights are exp((l - max) / T): the most likely token has weight 1
        double total = 0;
        for (int i = 0; i < n; i++) {
            total += Math.exp((logit(keys[i]) - max) * invT);
        }
        float minP = options.minP();
        if (minP > 0f) {
            // p_i >= minP * p_max  <=>  w_i >= minP. The survivors are the most likely tokens, so the
            // top-p prefix sums below (over the distribution before min-p) are unchanged by dropping them
            // first; min-p and top-p both keep a most-likely prefix, so their order does not matter.
            int m = 0;
            for (int i = 0; i < n; i++) {
                if (Math.exp((logit(keys[i]) - max) * invT) >= minP) {
                    keys[m++] = keys[i];
                }
            }
            n = m;
        }
        float topP = options.topP();
        if (topP < 1f) {
            if (!sorted) {
                Arrays.sort(keys, 0, n);
            }
            double limit = topP * total;
            double before = 0;
            int m = 0;
            while (m < n && (m == 0 || before < limit)) {
                before += Math.exp((logit(keys[m]) - max) * invT);
                m++;
            }
            n = m;
        }
        for (int i = 0; i < n; i++) {
            weights[i] = Math.exp((logit(keys[i]) - max) * invT);
        }
        return n;
    }

    /** Puts the k smallest keys (the k most likely tokens) in {@code keys[0..k)}, unordered: a max-heap. */
    private int selectTopK(int k) {
        for (int i = 0; i < k; i++) {
            keys[i] = key(work[i], i);
            siftUp(i);
        }
        for (int i = k; i < vocab; i++) {
            long c = key(work[i], i);
            if (c < keys[0]) {
                keys[0] = c;
                siftDown(k);
            }
        }
        return k;
    }

    private void siftUp(int i) {
        long v = keys[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (keys[parent] >= v) {
                break;
            }
            keys[i] = keys[parent];
            i = parent;
        }
        keys[i] = v;
    }

    private void siftDown(int size) {
        long v = keys[0];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && keys[child + 1] > keys[child]) {
                child++;
            }
            if (keys[child] <= v) {
                break;
            }
            keys[i] = keys[child];
            i = child;
        }
        keys[i] = v;
    }

    /**
     * A long that sorts ascending by logit descending, then id ascending: the high half is the logit's bits
     * mapped to an order-preserving int and complemented, the low half the id.
     */
    static long key(float logit, int id) {
        int bits = Float.floatToIntBits(logit);
        int ordered = bits ^ ((bits >> 31) & 0x7fffffff);
        return ((long) ~ordered << 32) | (id & 0xffffffffL);
    }

    static float logit(long key) {
        int ordered = ~(int) (key >>> 32);
        return Float.intBitsToFloat(ordered ^ ((ordered >> 31) & 0x7fffffff));
    }

    static int id(long key) {
        return (int) key;
    }
}
