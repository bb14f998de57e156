package dev.edgelm.format.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Sampling defaults a model ships with (Hugging Face's {@code generation_config.json}), carried in a GGUF
 * file as {@code edgelm.generation.*} keys, which llama.cpp ignores. Absent fields are null.
 */
public record GenerationDefaults(
        Boolean doSample,
        Double temperature,
        Double topP,
        Integer topK,
        Double minP,
        Double repetitionPenalty,
        Double presencePenalty,
        int[] eosTokenIds) {

    public static final String PREFIX = "edgelm.generation.";
    public static final GenerationDefaults NONE = new GenerationDefaults(null, null, null, null, null, null, null, null);

    /** From a parsed {@code generation_config.json}. */
    public static GenerationDefaults fromJson(JsonNode j) {
        int[] eos = null;
        JsonNode e = j.get("eos_token_id");
        if (e != null && e.isArray()) {
            eos = new int[e.size()];
            for (int i = 0; i < eos.length; i++) {
                eos[i] = e.get(i).asInt();
            }
        } else if (e != null && e.canConvertToInt()) {
            eos = new int[] {e.asInt()};
        }
        return new GenerationDefaults(
                j.hasNonNull("do_sample") ? j.get("do_sample").asBoolean() : null,
                number(j, "temperature"), number(j, "top_p"),
                j.hasNonNull("top_k") && j.get("top_k").canConvertToInt() ? j.get("top_k").asInt() : null,
                number(j, "min_p"), number(j, "repetition_penalty"), number(j, "presence_penalty"), eos);
    }

    private static Double number(JsonNode j, String field) {
        JsonNode v = j.get(field);
        return v != null && v.isNumber() ? v.asDouble() : null;
    }

    public static GenerationDefaults read(GgufMetadata m) {
        return new GenerationDefaults(
                m.optBoolean(PREFIX + "do_sample").orElse(null),
                m.optDouble(PREFIX + "temperature").orElse(null),
                m.optDouble(PREFIX + "top_p").orElse(null),
                m.optLong(PREFIX + "top_k").map(Long::intValue).orElse(null),
                m.optDouble(PREFIX + "min_p").orElse(null),
                m.optDouble(PREFIX + "repetition_penalty").orElse(null),
                m.optDouble(PREFIX + "presence_penalty").orElse(null),
                m.optIntArray(PREFIX + "eos_token_id").orElse(null));
    }

    public void writeTo(Map<String, GgufValue> meta) {
        if (doSample != null) {
            meta.put(PREFIX + "do_sample", GgufValue.bool(doSample));
        }
        putFloat(meta, "temperature", temperature);
        putFloat(meta, "top_p", topP);
        if (topK != null) {
            meta.put(PREFIX + "top_k", GgufValue.i32(topK));
        }
        putFloat(meta, "min_p", minP);
        putFloat(meta, "repetition_penalty", repetitionPenalty);
        putFloat(meta, "presence_penalty", presencePenalty);
        if (eosTokenIds != null) {
            meta.put(PREFIX + "eos_token_id", GgufValue.i32Array(eosTokenIds));
        }
    }

    private static void putFloat(Map<String, GgufValue> meta, String name, Double v) {
        if (v != null) {
            meta.put(PREFIX + name, GgufValue.f32(v.floatValue()));
        }
    }

    /** e.g. "temperature 0.6, top_p 0.95, top_k 20" or "none". */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        append(sb, "do_sample", doSample);
        append(sb, "temperature", temperature);
        append(sb, "top_p", topP);
        append(sb, "top_k", topK);
        append(sb, "min_p", minP);
        append(sb, "repetition_penalty", repetitionPenalty);
        append(sb, "presence_penalty", presencePenalty);
        return sb.isEmpty() ? "none" : sb.toString();
    }

    private static void append(StringBuilder sb, String name, Object v) {
        if (v != null) {
            sb.append(sb.isEmpty() ? "" : ", ").append(name).append(' ').append(v instanceof Double d ? trim(d) : v);
        }
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf((float) d);
    }
}
