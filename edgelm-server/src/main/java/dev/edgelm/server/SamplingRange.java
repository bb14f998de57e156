package dev.edgelm.server;

/**
 * The range the API accepts for a sampling field (llama-server's and OpenAI's bounds), beyond the engine's own
 * checks: one place for the request parser ({@link Sampling}) and for clients that check a value before they send
 * it (the {@code run --server} chat's {@code /set}).
 */
public record SamplingRange(double min, double max) {
    public static final SamplingRange TEMPERATURE = new SamplingRange(0, 100);
    public static final SamplingRange PROBABILITY = new SamplingRange(0, 1);
    /** {@code presence_penalty} and {@code frequency_penalty}. */
    public static final SamplingRange PENALTY = new SamplingRange(-2, 2);
    public static final SamplingRange REPEAT_PENALTY = new SamplingRange(0, 100);

    /** The range of an API field ({@code temperature}, {@code top_p}, ...), or null for a field without one here. */
    public static SamplingRange of(String field) {
        return switch (field) {
            case "temperature" -> TEMPERATURE;
            case "top_p", "min_p" -> PROBABILITY;
            case "presence_penalty", "frequency_penalty" -> PENALTY;
            case "repeat_penalty" -> REPEAT_PENALTY;
            default -> null;
        };
    }

    public boolean contains(double v) {
        return v >= min && v <= max;
    }
}
