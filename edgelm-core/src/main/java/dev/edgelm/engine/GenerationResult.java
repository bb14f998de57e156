package dev.edgelm.engine;

/**
 * What one {@link Session#generate} call produced.
 *
 * @param tokens     the emitted token ids (no stop token)
 * @param text       the emitted text (empty without a {@link TokenDecoder}); ends before a stop string
 * @param reason     why generation ended
 * @param stopToken  the stop token id produced ({@link StopReason#STOP_TOKEN}), else -1
 * @param stopString the stop string found ({@link StopReason#STOP_STRING}), else null
 * @param seed       the random seed used (for reproducing a sampled generation)
 */
public record GenerationResult(int[] tokens, String text, StopReason reason, int stopToken, String stopString, long seed) {}
