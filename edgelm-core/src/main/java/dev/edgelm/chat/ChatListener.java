package dev.edgelm.chat;

/**
 * Receives a reply as it is generated, its text split into the model's thinking (inside
 * {@code <think>...</think>}) and its answer. The tags themselves, the newlines that surround them and stop
 * tokens are never passed on. Called on the generating thread; may call {@link Conversation#cancel()}.
 */
public interface ChatListener {
    ChatListener NONE = new ChatListener() {};

    /** Text of the model's reasoning. */
    default void onThinking(String text) {}

    /** Text of the answer. */
    default void onAnswer(String text) {}

    /** Before the prompt is read: {@code tokens} new tokens to prefill (the rest of the conversation is reused). */
    default void onPrefill(int tokens) {}

    /** Every generated token id, before its text (which may come later, or never for special tokens). */
    default void onToken(int id) {}
}
