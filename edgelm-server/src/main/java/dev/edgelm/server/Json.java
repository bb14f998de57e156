package dev.edgelm.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * JSON for the HTTP API: request bodies are parsed under explicit limits (nesting depth, string, number and
 * name lengths, document length), far below Jackson's defaults, so a hostile body cannot cost more than its
 * size; duplicate keys are refused. Typed accessors throw {@link ApiException}s naming the field.
 */
public final class Json {
    static final int MAX_DEPTH = 64;
    static final int MAX_NUMBER_LENGTH = 64;
    static final int MAX_NAME_LENGTH = 1024;

    public static final ObjectMapper MAPPER = new ObjectMapper();
    private final ObjectMapper strict;

    /** @param maxBodyBytes the largest body accepted (also the longest string) */
    public Json(int maxBodyBytes) {
        JsonFactory f = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_DEPTH)
                        .maxNumberLength(MAX_NUMBER_LENGTH)
                        .maxNameLength(MAX_NAME_LENGTH)
                        .maxStringLength(maxBodyBytes)
                        .maxDocumentLength(maxBodyBytes)
                        .build())
                .build();
        f.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        this.strict = new ObjectMapper(f).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** The body as a JSON object, or a 400 saying why it is not one. */
    public ObjectNode parseObject(byte[] body) {
        JsonNode node;
        try {
            node = strict.readTree(body);
        } catch (StreamConstraintsException e) {
            throw ApiException.invalid(null, "the request body exceeds a JSON limit: " + e.getOriginalMessage());
        } catch (IOException e) {
            String m = e.getMessage();
            int cut = m == null ? -1 : m.indexOf("\n at [Source");
            throw ApiException.invalid(null, "the request body is not valid JSON: " + (cut > 0 ? m.substring(0, cut) : m));
        }
        if (node == null || node.isMissingNode()) {
            throw ApiException.invalid(null, "the request body is empty; expected a JSON object");
        }
        if (!(node instanceof ObjectNode o)) {
            throw ApiException.invalid(null, "the request body must be a JSON object, got " + kind(node));
        }
        return o;
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    public static ArrayNode array() {
        return JsonNodeFactory.instance.arrayNode();
    }

    public static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A JSON value as plain maps, lists and scalars (for the chat template). */
    public static Object plain(JsonNode node) {
        return MAPPER.convertValue(node, Object.class);
    }

    static String kind(JsonNode n) {
        if (n == null || n.isMissingNode()) {
            return "nothing";
        }
        return switch (n.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT, POJO -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> n.getNodeType().toString().toLowerCase();
        };
    }

    /** A field that is absent or null counts as not given. */
    static boolean given(JsonNode parent, String name) {
        JsonNode v = parent.get(name);
        return v != null && !v.isNull();
    }

    static String string(JsonNode parent, String name, String path, String otherwise) {
        if (!given(parent, name)) {
            return otherwise;
        }
        JsonNode v = parent.get(name);
        if (!v.isTextual()) {
            throw ApiException.invalid(path, "'" + path + "' must be a string, got " + kind(v));
        }
        return v.asText();
    }

    static Boolean bool(JsonNode parent, String name, String path, Boolean otherwise) {
        if (!given(parent, name)) {
            return otherwise;
        }
        JsonNode v = parent.get(name);
        if (!v.isBoolean()) {
            throw ApiException.invalid(path, "'" + path + "' must be a boolean, got " + kind(v));
        }
        return v.asBoolean();
    }

    static Double number(JsonNode parent, String name, String path, double min, double max) {
        if (!given(parent, name)) {
            return null;
        }
        JsonNode v = parent.get(name);
        if (!v.isNumber()) {
            throw ApiException.invalid(path, "'" + path + "' must be a number, got " + kind(v));
        }
        double d = v.asDouble();
        if (!(d >= min && d <= max)) {
            throw ApiException.invalid(path, "'" + path + "' must be in [" + fmt(min) + ", " + fmt(max) + "], got " + v.asText());
        }
        return d;
    }

    static Long integer(JsonNode parent, String name, String path, long min, long max) {
        if (!given(parent, name)) {
            return null;
        }
        JsonNode v = parent.get(name);
        if (!v.isIntegralNumber() && !(v.isNumber() && v.asDouble() == Math.rint(v.asDouble()))) {
            throw ApiException.invalid(path, "'" + path + "' must be an integer, got " + (v.isNumber() ? v.asText() : kind(v)));
        }
        if (!v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            throw ApiException.invalid(path, "'" + path + "' must be in [" + min + ", " + max + "], got " + v.asText());
        }
        return v.asLong();
    }

    static ObjectNode objectField(JsonNode parent, String name, String path) {
        if (!given(parent, name)) {
            return null;
        }
        JsonNode v = parent.get(name);
        if (!(v instanceof ObjectNode o)) {
            throw ApiException.invalid(path, "'" + path + "' must be an object, got " + kind(v));
        }
        return o;
    }

    static ArrayNode arrayField(JsonNode parent, String name, String path) {
        if (!given(parent, name)) {
            return null;
        }
        JsonNode v = parent.get(name);
        if (!(v instanceof ArrayNode a)) {
            throw ApiException.invalid(path, "'" + path + "' must be an array, got " + kind(v));
        }
        return a;
    }

    /** {@code stop}: a string or an array of non-empty strings. */
    static List<String> stops(JsonNode parent, String name, int max) {
        if (!given(parent, name)) {
            return List.of();
        }
        JsonNode v = parent.get(name);
        List<String> out = new ArrayList<>();
        if (v.isTextual()) {
            out.add(v.asText());
        } else if (v.isArray()) {
            for (int i = 0; i < v.size(); i++) {
                if (!v.get(i).isTextual()) {
                    throw ApiException.invalid(name, "'" + name + "[" + i + "]' must be a string, got " + kind(v.get(i)));
                }
                out.add(v.get(i).asText());
            }
        } else {
            throw ApiException.invalid(name, "'" + name + "' must be a string or an array of strings, got " + kind(v));
        }
        if (out.size() > max) {
            throw ApiException.invalid(name, "'" + name + "' holds " + out.size() + " strings; at most " + max + " are allowed");
        }
        for (String s : out) {
            if (s.isEmpty()) {
                throw ApiException.invalid(name, "'" + name + "' must not contain an empty string");
            }
        }
        return out;
    }

    static Map<String, Object> plainObject(ObjectNode o) {
        @SuppressWarnings("unchecked")
        Map<String, Object> m = MAPPER.convertValue(o, Map.class);
        return m;
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }
}
