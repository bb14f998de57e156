package dev.edgelm.engine;

/** Why a generation ended. */
public enum StopReason {
    /** The model produced one of the stop token ids (not emitted, not fed). */
    STOP_TOKEN,
    /** The text contained a stop string (text from it on is not emitted). */
    STOP_STRING,
    /** {@code maxNewTokens} tokens were emitted. */
    MAX_TOKENS,
    /** No limit was set and the context capacity is reached. */
    CONTEXT_FULL,
    /** {@link Session#cancel()} was called. */
    CANCELLED
}
