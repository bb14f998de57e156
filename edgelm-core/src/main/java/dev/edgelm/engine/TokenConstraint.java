package dev.edgelm.engine;

/**
 * Restricts which tokens a generation may produce (constrained decoding: JSON, a grammar). One instance
 * follows one generation: {@link Sampler} calls {@link #mask} before each draw and {@link #accept} with the
 * token drawn. Stop tokens are the sampler's business: they are allowed exactly when {@link #canStop()}.
 */
public interface TokenConstraint {

    /** Makes one constraint per generation (a constraint holds the state of the text produced so far). */
    @FunctionalInterface
    interface Factory {
        TokenConstraint open();
    }

    /** Sets the logit of every token not allowed next to negative infinity; leaves the others as they are. */
    void mask(float[] logits);

    /** Advances past {@code token}, which {@link #mask} allowed. */
    void accept(int token);

    /** Whether the text so far is complete, so the generation may end here. */
    boolean canStop();
}
