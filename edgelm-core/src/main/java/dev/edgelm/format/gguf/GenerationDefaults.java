package dev.edgelm.format.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Sampling defaults a model ships with (Hugging Face's {@code generation_config.json}), carried in a GGUF
 * file as {@code edgelm.generation.*} keys, which llama.cpp ignores. Absent fields are null. The one reader of
 * {@code generation_config.json} for the engine, the converter and the chat format.
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
    public static final String FILE_NAME = "generation_config.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** {@code folder/generation_config.json} ({@link #readJson}), or {@link #NONE} when the folder has none. */
    public static GenerationDefaults readFolder(Path folder) {
        Path file = folder.resolve(FILE_NAME);
        return Files.isRegularFile(file) ? readJson(file) : NONE;
    }

    /**
     * Parses a {@code generation_config.json}. Every field is optional (absent or null: null here) and unknown
     * fields are ignored; a file that is not a JSON object, or a known field of the wrong type, is rejected
     * naming the file.
     */
    public static GenerationDefaults readJson(Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read or parse: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new EdgeLmException(file + ": not a JSON object");
        }
        JsonNode doSample = present(root, "do_sample");
        if (doSample != null && !doSample.isBoolean()) {
            throw new EdgeLmException(file + ": field 'do_sample' must be true or false, got " + doSample);
        }
        return new GenerationDefaults(
                doSample == null ? null : doSample.asBoolean(),
                number(root, "temperature", file),
                number(root, "top_p", file),
                integer(root, "top_k", file),
                number(root, "min_p", file),
                number(root, "repetition_penalty", file),
                number(root, "presence_penalty", file),
                tokenIds(root, "eos_token_id", file));
    }

    private static JsonNode present(JsonNode root, String field) {
        JsonNode v = root.get(field);
        return v == null || v.isNull() ? null : v;
    }

    private static Double number(JsonNode root, String field, Path file) {
        JsonNode v = present(root, field);
        if (v != null && !v.isNumber()) {
            throw new EdgeLmException(file + ": field '" + field + "' must be a number, got " + v);
        }
        return v == null ? null : v.asDouble();
    }

    private static Integer integer(JsonNode root, String field, Path file) {
        JsonNode v = present(root, field);
        if (v != null && !(v.isIntegralNumber() && v.canConvertToInt())) {
            throw new EdgeLmException(file + ": field '" + field + "' must be an integer, got " + v);
        }
        return v == null ? null : v.asInt();
    }

    /** {@code eos_token_id} is a single id or a list of ids. */
    private static int[] tokenIds(JsonNode root, String field, Path file) {
        JsonNode v = present(root, field);
        if (v == null) {
            return null;
        }
        List<JsonNode> ids = new ArrayList<>();
        (v.isArray() ? v : List.of(v)).forEach(ids::add);
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode id = ids.get(i);
            if (!(id.isIntegralNumber() && id.canConvertToInt())) {
                throw new EdgeLmException(file + ": field '" + field + "' must be a token id or a list of them, got " + v);
            }
            out[i] = id.asInt();
        }
        return out;
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
