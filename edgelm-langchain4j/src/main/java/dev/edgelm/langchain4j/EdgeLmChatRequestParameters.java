package dev.edgelm.langchain4j;

import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.DefaultChatRequestParameters;
import java.util.Objects;

/**
 * LangChain4j's common request parameters plus EdgeLM's own: {@code minP}, {@code repeatPenalty} (llama.cpp's
 * repetition penalty, 1 = off), {@code seed}, and {@code thinking} (the chat template's {@code enable_thinking};
 * off unless set, as in {@code edgelm run}). A field left null keeps the model default's (its
 * {@code generation_config.json}) or the builder's.
 */
public class EdgeLmChatRequestParameters extends DefaultChatRequestParameters {
    private final Double minP;
    private final Double repeatPenalty;
    private final Long seed;
    private final Boolean thinking;

    protected EdgeLmChatRequestParameters(Builder builder) {
        super(builder);
        this.minP = builder.minP;
        this.repeatPenalty = builder.repeatPenalty;
        this.seed = builder.seed;
        this.thinking = builder.thinking;
    }

    public Double minP() {
        return minP;
    }

    public Double repeatPenalty() {
        return repeatPenalty;
    }

    public Long seed() {
        return seed;
    }

    public Boolean thinking() {
        return thinking;
    }

    @Override
    public EdgeLmChatRequestParameters overrideWith(ChatRequestParameters that) {
        return builder().overrideWith(this).overrideWith(that).build();
    }

    @Override
    public EdgeLmChatRequestParameters defaultedBy(ChatRequestParameters that) {
        return builder().overrideWith(that).overrideWith(this).build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EdgeLmChatRequestParameters that && super.equals(o) && Objects.equals(minP, that.minP)
                && Objects.equals(repeatPenalty, that.repeatPenalty) && Objects.equals(seed, that.seed)
                && Objects.equals(thinking, that.thinking);
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), minP, repeatPenalty, seed, thinking);
    }

    @Override
    public String toString() {
        return "EdgeLmChatRequestParameters{" + super.toString() + ", minP=" + minP + ", repeatPenalty=" + repeatPenalty
                + ", seed=" + seed + ", thinking=" + thinking + "}";
    }

    public static Builder builder() {
        return new Builder();
    }

    public static class Builder extends DefaultChatRequestParameters.Builder<Builder> {
        private Double minP;
        private Double repeatPenalty;
        private Long seed;
        private Boolean thinking;

        @Override
        public Builder overrideWith(ChatRequestParameters parameters) {
            super.overrideWith(parameters);
            if (parameters instanceof EdgeLmChatRequestParameters p) {
                minP(p.minP != null ? p.minP : minP);
                repeatPenalty(p.repeatPenalty != null ? p.repeatPenalty : repeatPenalty);
                seed(p.seed != null ? p.seed : seed);
                thinking(p.thinking != null ? p.thinking : thinking);
            }
            return this;
        }

        /** Drop tokens less likely than {@code minP} times the most likely one (0 = off). */
        public Builder minP(Double minP) {
            this.minP = minP;
            return this;
        }

        /** llama.cpp's repetition penalty: above 1 discourages tokens already in the context (1 = off). */
        public Builder repeatPenalty(Double repeatPenalty) {
            this.repeatPenalty = repeatPenalty;
            return this;
        }

        /** The random seed of sampling (a fixed seed repeats a sampled reply). */
        public Builder seed(Long seed) {
            this.seed = seed;
            return this;
        }

        /** Thinking on or off (the template's {@code enable_thinking}); off unless set. */
        public Builder thinking(Boolean thinking) {
            this.thinking = thinking;
            return this;
        }

        @Override
        public EdgeLmChatRequestParameters build() {
            return new EdgeLmChatRequestParameters(this);
        }
    }
}
