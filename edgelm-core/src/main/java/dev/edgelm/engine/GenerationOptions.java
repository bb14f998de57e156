package dev.edgelm.engine;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * How to generate: sampling settings, limits and stop conditions. Immutable; build with {@link #builder()}.
 * The defaults are greedy decoding (temperature 0) with no penalties, no stop conditions and no token limit
 * other than the session's context capacity. {@link Builder#apply(GenerationConfig)} takes a model's
 * recommended settings; setters called after it override them. {@link Sampler} documents what each
 * setting does and in which order.
 */
public final class GenerationOptions {
    private final int maxNewTokens;
    private final float temperature;
    private final int topK;
    private final float topP;
    private final float minP;
    private final float repetitionPenalty;
    private final float presencePenalty;
    private final float frequencyPenalty;
    private final int topLogprobs;
    private final TokenConstraint.Factory constraint;
    private final Long seed;
    private final int[] stopTokenIds;
    private final List<String> stopStrings;

    private GenerationOptions(Builder b) {
        this.maxNewTokens = b.maxNewTokens;
        this.temperature = b.temperature;
        this.topK = b.topK;
        this.topP = b.topP;
        this.minP = b.minP;
        this.repetitionPenalty = b.repetitionPenalty;
        this.presencePenalty = b.presencePenalty;
        this.frequencyPenalty = b.frequencyPenalty;
        this.topLogprobs = b.topLogprobs;
        this.constraint = b.constraint;
        this.seed = b.seed;
        this.stopTokenIds = Arrays.stream(b.stopTokenIds).distinct().toArray();
        this.stopStrings = List.copyOf(b.stopStrings);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Greedy decoding, nothing else set. */
    public static GenerationOptions greedy() {
        return builder().build();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxNewTokens = maxNewTokens;
        b.temperature = temperature;
        b.topK = topK;
        b.topP = topP;
        b.minP = minP;
        b.repetitionPenalty = repetitionPenalty;
        b.presencePenalty = presencePenalty;
        b.frequencyPenalty = frequencyPenalty;
        b.topLogprobs = topLogprobs;
        b.constraint = constraint;
        b.seed = seed;
        b.stopTokenIds = stopTokenIds.clone();
        b.stopStrings = new ArrayList<>(stopStrings);
        return b;
    }

    /** The token limit, or empty for "until a stop condition or the end of the context". */
    public OptionalInt maxNewTokens() {
        return maxNewTokens > 0 ? OptionalInt.of(maxNewTokens) : OptionalInt.empty();
    }

    public float temperature() {
        return temperature;
    }

    /** 0 = off. */
    public int topK() {
        return topK;
    }

    /** 1 = off. */
    public float topP() {
        return topP;
    }

    /** 0 = off. */
    public float minP() {
        return minP;
    }

    /** 1 = off. */
    public float repetitionPenalty() {
        return repetitionPenalty;
    }

    /** 0 = off. */
    public float presencePenalty() {
        return presencePenalty;
    }

    /** 0 = off; subtracted from a token's logit once per time this generation produced it. */
    public float frequencyPenalty() {
        return frequencyPenalty;
    }

    /**
     * -1 = no log-probabilities; otherwise each token's log-probability and this many most likely
     * alternatives are reported to {@link GenerationListener#onLogprobs}.
     */
    public int topLogprobs() {
        return topLogprobs;
    }

    /** Makes the constraint each generation decodes under, or null for none. */
    public TokenConstraint.Factory constraint() {
        return constraint;
    }

    /** The random seed, or empty for a fresh one per generation. */
    public OptionalLong seed() {
        return seed == null ? OptionalLong.empty() : OptionalLong.of(seed);
    }

    public int[] stopTokenIds() {
        return stopTokenIds.clone();
    }

    public List<String> stopStrings() {
        return stopStrings;
    }

    /** True when every step takes the most likely token (temperature 0 or top-k 1). */
    public boolean isGreedy() {
        return temperature == 0f || topK == 1;
    }

    public boolean isStopToken(int id) {
        for (int s : stopTokenIds) {
            if (s == id) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "GenerationOptions[maxNewTokens=" + (maxNewTokens > 0 ? maxNewTokens : "unlimited")
                + ", temperature=" + temperature + ", topK=" + topK + ", topP=" + topP + ", minP=" + minP
                + ", repetitionPenalty=" + repetitionPenalty + ", presencePenalty=" + presencePenalty
                + ", frequencyPenalty=" + frequencyPenalty + ", topLogprobs=" + topLogprobs
                + (constraint == null ? "" : ", constrained") + ", seed=" + seed + ", stopTokenIds=" + Arrays.toString(stopTokenIds) + ", stopStrings=" + stopStrings + "]";
    }

    public static final class Builder {
        private int maxNewTokens;
        private float temperature;
        private int topK;
        private float topP = 1f;
        private float minP;
        private float repetitionPenalty = 1f;
        private float presencePenalty;
        private float frequencyPenalty;
        private int topLogprobs = -1;
        private TokenConstraint.Factory constraint;
        private Long seed;
        private int[] stopTokenIds = new int[0];
        private List<String> stopStrings = new ArrayList<>();

        private Builder() {}

        /**
         * Takes a model's {@code generation_config.json} settings: {@code do_sample: false} (or absent)
         * means greedy; {@code do_sample: true} samples at the given temperature (1 when absent) with its
         * top-k / top-p / min-p; penalties are taken either way, and {@code eos_token_id} is added to the
         * stop token ids. Fields the config lacks keep their current values.
         */
        public Builder apply(GenerationConfig config) {
            if (Boolean.TRUE.equals(config.doSample())) {
                temperature(config.temperature() != null ? config.temperature().floatValue() : 1f);
            } else {
                temperature(0f);
            }
            if (config.topK() != null) {
                topK(config.topK());
            }
            if (config.topP() != null) {
                topP(config.topP().floatValue());
            }
            if (config.minP() != null) {
                minP(config.minP().floatValue());
            }
            if (config.repetitionPenalty() != null) {
                repetitionPenalty(config.repetitionPenalty().floatValue());
            }
            if (config.presencePenalty() != null) {
                presencePenalty(config.presencePenalty().floatValue());
            }
            return addStopTokenIds(config.eosTokenIds());
        }

        /** At most {@code n} new tokens (stop tokens not counted); {@code 0} = no limit. */
        public Builder maxNewTokens(int n) {
            if (n < 0) {
                throw new EdgeLmException("max new tokens must be >= 0 (0 = no limit), got " + n);
            }
            this.maxNewTokens = n;
            return this;
        }

        /** 0 = greedy. */
        public Builder temperature(float t) {
            if (!(t >= 0f) || Float.isInfinite(t)) {
                throw new EdgeLmException("temperature must be a finite number >= 0, got " + t);
            }
            this.temperature = t;
            return this;
        }

        /** Keep only the k most likely tokens; 0 = off. */
        public Builder topK(int k) {
            if (k < 0) {
                throw new EdgeLmException("top-k must be >= 0 (0 = off), got " + k);
            }
            this.topK = k;
            return this;
        }

        /** Nucleus sampling; 1 = off. */
        public Builder topP(float p) {
            if (!(p > 0f && p <= 1f)) {
                throw new EdgeLmException("top-p must be in (0, 1], got " + p);
            }
            this.topP = p;
            return this;
        }

        /** Drop tokens less likely than {@code p} times the most likely one; 0 = off. */
        public Builder minP(float p) {
            if (!(p >= 0f && p <= 1f)) {
                throw new EdgeLmException("min-p must be in [0, 1], got " + p);
            }
            this.minP = p;
            return this;
        }

        /** 1 = off; above 1 discourages tokens already in the context. */
        public Builder repetitionPenalty(float p) {
            if (!(p > 0f) || Float.isInfinite(p)) {
                throw new EdgeLmException("repetition penalty must be a finite number > 0, got " + p);
            }
            this.repetitionPenalty = p;
            return this;
        }

        /** 0 = off; subtracted once from the logit of every token generated so far. */
        public Builder presencePenalty(float p) {
            if (!Float.isFinite(p)) {
                throw new EdgeLmException("presence penalty must be a finite number, got " + p);
            }
            this.presencePenalty = p;
            return this;
        }

        /** 0 = off; subtracted from a token's logit once per time it was generated (OpenAI's definition). */
        public Builder frequencyPenalty(float p) {
            if (!Float.isFinite(p)) {
                throw new EdgeLmException("frequency penalty must be a finite number, got " + p);
            }
            this.frequencyPenalty = p;
            return this;
        }

        /** -1 = off; otherwise report log-probabilities with {@code k} alternatives (0..100). */
        public Builder topLogprobs(int k) {
            if (k < -1 || k > 100) {
                throw new EdgeLmException("top logprobs must be in -1..100 (-1 = off), got " + k);
            }
            this.topLogprobs = k;
            return this;
        }

        /** Decode under a constraint made by {@code factory} per generation; null = none. */
        public Builder constraint(TokenConstraint.Factory factory) {
            this.constraint = factory;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder stopTokenIds(int... ids) {
            for (int id : ids) {
                if (id < 0) {
                    throw new EdgeLmException("stop token ids must be >= 0, got " + id);
                }
            }
            this.stopTokenIds = ids.clone();
            return this;
        }

        public Builder addStopTokenIds(int... ids) {
            int[] all = Arrays.copyOf(stopTokenIds, stopTokenIds.length + ids.length);
            System.arraycopy(ids, 0, all, stopTokenIds.length, ids.length);
            return stopTokenIds(all);
        }

        public Builder stopStrings(List<String> strings) {
            for (String s : strings) {
                if (s == null || s.isEmpty()) {
                    throw new EdgeLmException("stop strings must not be empty");
                }
            }
            this.stopStrings = new ArrayList<>(strings);
            return this;
        }

        public Builder stopStrings(String... strings) {
            return stopStrings(List.of(strings));
        }

        public GenerationOptions build() {
            return new GenerationOptions(this);
        }
    }
}
