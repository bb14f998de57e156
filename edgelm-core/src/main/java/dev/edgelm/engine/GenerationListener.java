package dev.edgelm.engine;

/**
 * Receives a generation as it happens, on the generating thread. {@code onToken} is called once per
 * emitted token, before the model runs on it; {@code onText} whenever text becomes final (text lags the
 * tokens while a UTF-8 character is incomplete or while it might be the start of a stop string). Stop
 * tokens and stop strings are never passed on. A listener may call {@link Session#cancel()}.
 */
public interface GenerationListener {
    GenerationListener NONE = new GenerationListener() {};

    default void onToken(int id) {}

    default void onText(String piece) {}

    /**
     * The log-probabilities of the token about to be passed to {@link #onToken}, when the options ask for
     * them ({@link GenerationOptions#topLogprobs()} {@code >= 0}); called just before {@code onToken}.
     */
    default void onLogprobs(TokenLogprobs logprobs) {}
}
