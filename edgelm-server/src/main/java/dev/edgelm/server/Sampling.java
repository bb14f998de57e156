package dev.edgelm.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.engine.GenerationOptions;
import java.util.List;

/**
 * The sampling fields of a completion request, as llama-server names them. Fields not given keep the
 * model's recommended settings ({@code generation_config.json}).
 */
record Sampling(Integer maxTokens, Double temperature, Double topP, Integer topK, Double minP, Long seed,
                List<String> stop, Double presencePenalty, Double frequencyPenalty, Double repeatPenalty) {
    static final int MAX_STOPS = 16;

    private static Double number(ObjectNode body, String field) {
        SamplingRange range = SamplingRange.of(field);
        return Json.number(body, field, field, range.min(), range.max());
    }

    static Sampling parse(ObjectNode body) {
        Long max = Json.integer(body, "max_tokens", "max_tokens", 1, Integer.MAX_VALUE);
        Long maxCompletion = Json.integer(body, "max_completion_tokens", "max_completion_tokens", 1, Integer.MAX_VALUE);
        Long nPredict = Json.integer(body, "n_predict", "n_predict", -1, Integer.MAX_VALUE); // llama.cpp: -1 = no limit
        Long limit = nPredict != null ? (nPredict <= 0 ? null : nPredict) : maxCompletion != null ? maxCompletion : max;
        Double temperature = number(body, "temperature");
        Double topP = number(body, "top_p");
        Long topK = Json.integer(body, "top_k", "top_k", 0, Integer.MAX_VALUE);
        Double minP = number(body, "min_p");
        Long seed = Json.integer(body, "seed", "seed", Long.MIN_VALUE, Long.MAX_VALUE);
        List<String> stop = Json.stops(body, "stop", MAX_STOPS);
        Double presence = number(body, "presence_penalty");
        Double frequency = number(body, "frequency_penalty");
        Double repeat = number(body, "repeat_penalty");
        return new Sampling(limit == null ? null : limit.intValue(), temperature, topP, topK == null ? null : topK.intValue(),
                minP, seed, stop, presence, frequency, repeat);
    }

    /** Applies the fields given; {@code maxNewTokens} is the limit after clamping to the context. */
    GenerationOptions.Builder apply(GenerationOptions.Builder b, int maxNewTokens) {
        b.maxNewTokens(maxNewTokens);
        if (temperature != null) {
            b.temperature(temperature.floatValue());
        }
        if (topP != null) {
            if (topP == 0) {
                b.topK(1); // nothing but the most likely token
            } else {
                b.topP(topP.floatValue());
            }
        }
        if (topK != null) {
            b.topK(topK);
        }
        if (minP != null) {
            b.minP(minP.floatValue());
        }
        if (seed != null) {
            b.seed(seed);
        }
        if (!stop.isEmpty()) {
            b.stopStrings(stop);
        }
        if (presencePenalty != null) {
            b.presencePenalty(presencePenalty.floatValue());
        }
        if (frequencyPenalty != null) {
            b.frequencyPenalty(frequencyPenalty.floatValue());
        }
        if (repeatPenalty != null && repeatPenalty > 0) { // llama.cpp: 1 = off (0 is read as off too)
            b.repetitionPenalty(repeatPenalty.floatValue());
        }
        return b;
    }
}
