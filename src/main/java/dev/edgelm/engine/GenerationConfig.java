package dev.edgelm.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A model's {@code generation_config.json} (in a GGUF file: its {@code edgelm.generation.*} keys): the
 * sampling settings its authors recommend and the token ids that end a turn. Every field is optional (null when absent); {@link #NONE} is the empty config.
 */
public record GenerationConfig(
        Boolean doSample,
        Double temperature,
        Integer topK,
        Double topP,
        Double minP,
        Double repetitionPenalty,
        Double presencePenalty,
        int[] eosTokenIds) {

    public static final GenerationConfig NONE = new GenerationConfig(null, null, null, null, null, null, null, new int[0]);

    public static final String FILE_NAME = "generation_config.json";

    /** Reads {@code folder/generation_config.json}, or returns {@link #NONE} when there is none. */
    public static GenerationConfig read(Path folder) {
        Path file = folder.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) {
            return NONE;
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(file));
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read or parse: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new EdgeLmException(file + ": not a JSON object");
        }
        return fromJson(root, file.toString());
    }

    /** The generation defaults in a GGUF header ({@link GenerationDefaults}), or {@link #NONE}. */
    public static GenerationConfig fromGguf(GgufMetadata metadata) {
        GenerationDefaults d = GenerationDefaults.read(metadata);
        return new GenerationConfig(d.doSample(), d.temperature(), d.topK(), d.topP(), d.minP(), d.repetitionPenalty(),
                d.presencePenalty(), d.eosTokenIds() == null ? new int[0] : d.eosTokenIds().clone());
    }

    public static GenerationConfig fromJson(JsonNode root, String source) {
        JsonNode doSample = root.get("do_sample");
        if (doSample != null && !doSample.isNull() && !doSample.isBoolean()) {
            throw new EdgeLmException(source + ": field 'do_sample' must be true or false");
        }
        return new GenerationConfig(
                doSample == null || doSample.isNull() ? null : doSample.asBoolean(),
                number(root, "temperature", source),
                integer(root, "top_k", source),
                number(root, "top_p", source),
                number(root, "min_p", source),
                number(root, "repetition_penalty", source),
                number(root, "presence_penalty", source),
                tokenIds(root, "eos_token_id", source));
    }

    private static Double number(JsonNode root, String field, String source) {
        JsonNode v = root.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()) {
            throw new EdgeLmException(source + ": field '" + field + "' must be a number, got " + v);
        }
        return v.asDouble();
    }

    private static Integer integer(JsonNode root, String field, String source) {
        JsonNode v = root.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber()) {
            throw new EdgeLmException(source + ": field '" + field + "' must be an integer, got " + v);
        }
        return v.asInt();
    }

    /** {@code eos_token_id} is a single id or a list of ids. */
    private static int[] tokenIds(JsonNode root, String field, String source) {
        JsonNode v = root.get(field);
        if (v == null || v.isNull()) {
            return new int[0];
        }
        if (v.isIntegralNumber()) {
            return new int[] {v.asInt()};
        }
        if (v.isArray()) {
            int[] ids = new int[v.size()];
            for (int i = 0; i < ids.length; i++) {
                if (!v.get(i).isIntegralNumber()) {
                    throw new EdgeLmException(source + ": field '" + field + "' must hold token ids, got " + v);
                }
                ids[i] = v.get(i).asInt();
            }
            return ids;
        }
        throw new EdgeLmException(source + ": field '" + field + "' must be a token id or a list of them, got " + v);
    }
}
