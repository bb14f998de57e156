package dev.edgelm.chat;

import dev.edgelm.engine.StopReason;

/**
 * One assistant turn of a {@link Conversation}.
 *
 * @param text            the decoded reply, without the stop token (thinking and tags included, as generated)
 * @param thinking        the text inside the think block, or empty
 * @param answer          the text after the think block (all of it when there is none)
 * @param tokens          the generated ids, without the stop token
 * @param reason          why generation ended
 * @param promptTokens    tokens of the whole rendered conversation this turn answered
 * @param reusedTokens    of those, tokens the model state already held from earlier turns
 * @param prefilledTokens tokens run through the model before generating: {@code promptTokens - reusedTokens}
 * @param rolledBack      whether the state was returned to a snapshot because the new render differs from what it
 *                        held after that point (the template re-renders earlier turns differently)
 * @param seed            the sampling seed used
 */
public record Reply(String text, String thinking, String answer, int[] tokens, StopReason reason, int promptTokens,
                    int reusedTokens, int prefilledTokens, boolean rolledBack, long seed) {}
