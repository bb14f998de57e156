package dev.edgelm.server;

import dev.edgelm.util.EdgeLmException;
import dev.edgelm.grammar.Grammar;
import dev.edgelm.grammar.JsonSchemaGrammar;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A {@code POST /v1/chat/completions} body, checked field by field (each mistake is a 400 naming the field),
 * with the messages and tools turned into what the chat template takes: content parts joined as text items,
 * {@code tool_calls[].function.arguments} parsed from OpenAI's JSON string into an object.
 */
record ChatRequest(
        List<Map<String, Object>> messages,
        List<Map<String, Object>> tools,
        ToolChoice toolChoice,
        String forcedFunction,
        boolean stream,
        boolean includeUsage,
        Sampling sampling,
        boolean logprobs,
        int topLogprobs,
        ResponseFormat responseFormat,
        Grammar schemaGrammar,
        Map<String, Object> templateKwargs) {

    enum ToolChoice { AUTO, NONE, REQUIRED, NAMED }

    enum ResponseFormat { TEXT, JSON_OBJECT, JSON_SCHEMA }

    private static final Pattern FUNCTION_NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    private static final Set<String> SCHEMA_TYPES = Set.of("object", "array", "string", "number", "integer", "boolean", "null");

    /** Whether tool calls are parsed out of the reply. */
    boolean parsesToolCalls() {
        return tools != null && toolChoice != ToolChoice.NONE;
    }

    static ChatRequest parse(ObjectNode body, int maxMessages) {
        ArrayNode msgs = Json.arrayField(body, "messages", "messages");
        if (msgs == null) {
            throw ApiException.invalid("messages", "'messages' is required");
        }
        if (msgs.isEmpty()) {
            throw ApiException.invalid("messages", "'messages' must not be empty");
        }
        if (msgs.size() > maxMessages) {
            throw ApiException.invalid("messages", "'messages' holds " + msgs.size() + " messages; at most " + maxMessages + " are allowed");
        }
        Json.string(body, "model", "model", null);
        Long n = Json.integer(body, "n", "n", 1, 1);
        assert n == null || n == 1;
        List<Map<String, Object>> messages = new ArrayList<>();
        for (int i = 0; i < msgs.size(); i++) {
            messages.add(message(msgs.get(i), "messages[" + i + "]"));
        }

        List<Map<String, Object>> tools = tools(body);
        ToolChoice choice = ToolChoice.AUTO;
        String forced = null;
        JsonNode tc = body.get("tool_choice");
        if (tc != null && !tc.isNull()) {
            if (tc.isTextual()) {
                choice = switch (tc.asText()) {
                    case "auto" -> ToolChoice.AUTO;
                    case "none" -> ToolChoice.NONE;
                    case "required" -> ToolChoice.REQUIRED;
                    default -> throw ApiException.invalid("tool_choice",
                            "'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}, got \"" + tc.asText() + "\"");
                };
            } else if (tc.isObject()) {
                ObjectNode fn = Json.objectField(tc, "function", "tool_choice.function");
                String name = fn == null ? null : Json.string(fn, "name", "tool_choice.function.name", null);
                if (name == null) {
                    throw ApiException.invalid("tool_choice.function.name", "'tool_choice.function.name' is required");
                }
                choice = ToolChoice.NAMED;
                forced = name;
            } else {
                throw ApiException.invalid("tool_choice", "'tool_choice' must be a string or an object, got " + Json.kind(tc));
            }
            if (choice != ToolChoice.AUTO && choice != ToolChoice.NONE && tools == null) {
                throw ApiException.invalid("tool_choice", "'tool_choice' " + (forced != null ? "names a function" : "is \"required\"") + " but 'tools' is empty");
            }
            if (forced != null) {
                String f = forced;
                boolean declared = tools.stream().anyMatch(t -> f.equals(((Map<?, ?>) t.get("function")).get("name")));
                if (!declared) {
                    throw ApiException.invalid("tool_choice.function.name", "'tool_choice.function.name' \"" + forced + "\" is not one of the 'tools'");
                }
            }
        }
        Json.bool(body, "parallel_tool_calls", "parallel_tool_calls", true);

        boolean stream = Json.bool(body, "stream", "stream", false);
        boolean includeUsage = false;
        ObjectNode so = Json.objectField(body, "stream_options", "stream_options");
        if (so != null) {
            includeUsage = Json.bool(so, "include_usage", "stream_options.include_usage", false);
        }

        boolean logprobs = Json.bool(body, "logprobs", "logprobs", false);
        Long top = Json.integer(body, "top_logprobs", "top_logprobs", 0, 20);
        if (top != null && !logprobs) {
            throw ApiException.invalid("top_logprobs", "'top_logprobs' needs 'logprobs': true");
        }
        if (logprobs && stream && tools != null) {
            throw ApiException.invalid("logprobs", "'logprobs' is not supported with 'tools' and 'stream' together");
        }

        ResponseFormat format = ResponseFormat.TEXT;
        Grammar schemaGrammar = null;
        ObjectNode rf = Json.objectField(body, "response_format", "response_format");
        if (rf != null) {
            String type = Json.string(rf, "type", "response_format.type", null);
            if (type == null) {
                throw ApiException.invalid("response_format.type", "'response_format.type' is required");
            }
            switch (type) {
                case "text" -> format = ResponseFormat.TEXT;
                case "json_object" -> {
                    format = ResponseFormat.JSON_OBJECT;
                    if (Json.given(rf, "schema")) {
                        checkSchema(rf.get("schema"), "response_format.schema");
                        schemaGrammar = compileSchema(rf.get("schema"), "response_format.schema");
                        format = ResponseFormat.JSON_SCHEMA;
                    }
                }
                case "json_schema" -> {
                    ObjectNode js = Json.objectField(rf, "json_schema", "response_format.json_schema");
                    if (js == null || !Json.given(js, "schema")) {
                        throw ApiException.invalid("response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
                    }
                    Json.string(js, "name", "response_format.json_schema.name", null);
                    checkSchema(js.get("schema"), "response_format.json_schema.schema");
                    schemaGrammar = compileSchema(js.get("schema"), "response_format.json_schema.schema");
                    format = ResponseFormat.JSON_SCHEMA;
                }
                default -> throw ApiException.invalid("response_format.type",
                        "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got \"" + type + "\"");
            }
        }

        Map<String, Object> kwargs = new LinkedHashMap<>();
        ObjectNode ctk = Json.objectField(body, "chat_template_kwargs", "chat_template_kwargs");
        if (ctk != null) {
            kwargs.putAll(Json.plainObject(ctk));
            Json.bool(ctk, "enable_thinking", "chat_template_kwargs.enable_thinking", false);
        }
        Object thinking = kwargs.get("enable_thinking");
        kwargs.put("enable_thinking", thinking instanceof Boolean b && b); // off unless asked for, as in `edgelm run`
        if (format != ResponseFormat.TEXT && Boolean.TRUE.equals(kwargs.get("enable_thinking"))) {
            // the constraint would hold from the first token, inside the thinking block, and the answer would be empty
            throw ApiException.invalid("response_format", "'response_format' " + (format == ResponseFormat.JSON_OBJECT
                    ? "json_object" : "json_schema") + " cannot be combined with chat_template_kwargs.enable_thinking");
        }

        return new ChatRequest(messages, tools, choice, forced, stream, includeUsage, Sampling.parse(body), logprobs,
                logprobs ? (top == null ? 0 : top.intValue()) : -1, format, schemaGrammar, kwargs);
    }

    private static Map<String, Object> message(JsonNode node, String path) {
        if (!(node instanceof ObjectNode m)) {
            throw ApiException.invalid(path, "'" + path + "' must be an object, got " + Json.kind(node));
        }
        String role = Json.string(m, "role", path + ".role", null);
        if (role == null) {
            throw ApiException.invalid(path + ".role", "'" + path + ".role' is required");
        }
        if (!ROLES.contains(role)) {
            throw ApiException.invalid(path + ".role", "'" + path + ".role' must be system, user, assistant or tool, got \"" + role + "\"");
        }
        if (role.equals("developer")) {
            role = "system";
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("role", role);
        Object content = content(m, path);
        out.put("content", content == null ? "" : content);
        if (role.equals("assistant")) {
            String reasoning = Json.string(m, "reasoning_content", path + ".reasoning_content", null);
            if (reasoning != null) {
                out.put("reasoning_content", reasoning);
            }
            ArrayNode calls = Json.arrayField(m, "tool_calls", path + ".tool_calls");
            if (calls != null && !calls.isEmpty()) {
                List<Map<String, Object>> list = new ArrayList<>();
                for (int j = 0; j < calls.size(); j++) {
                    list.add(toolCall(calls.get(j), path + ".tool_calls[" + j + "]"));
                }
                out.put("tool_calls", list);
            } else if (content == null) {
                throw ApiException.invalid(path + ".content", "'" + path + ".content' is required (an assistant message without tool_calls)");
            }
        } else if (content == null) {
            throw ApiException.invalid(path + ".content", "'" + path + ".content' is required");
        }
        if (role.equals("tool")) {
            String id = Json.string(m, "tool_call_id", path + ".tool_call_id", null);
            if (id != null) {
                out.put("tool_call_id", id);
            }
        }
        Json.string(m, "name", path + ".name", null);
        return out;
    }

    /** A string, or an array of text parts (kept as the template's text items); null when absent. */
    private static Object content(ObjectNode m, String path) {
        if (!Json.given(m, "content")) {
            return null;
        }
        JsonNode c = m.get("content");
        if (c.isTextual()) {
            return c.asText();
        }
        if (!c.isArray()) {
            throw ApiException.invalid(path + ".content", "'" + path + ".content' must be a string or an array of text parts, got " + Json.kind(c));
        }
        List<Map<String, Object>> parts = new ArrayList<>();
        for (int j = 0; j < c.size(); j++) {
            String p = path + ".content[" + j + "]";
            JsonNode part = c.get(j);
            if (!part.isObject()) {
                throw ApiException.invalid(p, "'" + p + "' must be an object, got " + Json.kind(part));
            }
            String type = Json.string(part, "type", p + ".type", null);
            if (!"text".equals(type)) {
                throw ApiException.invalid(p + ".type", "'" + p + ".type' must be \"text\" (this server takes text only), got "
                        + (type == null ? "nothing" : "\"" + type + "\""));
            }
            String text = Json.string(part, "text", p + ".text", null);
            if (text == null) {
                throw ApiException.invalid(p + ".text", "'" + p + ".text' is required");
            }
            parts.add(Map.of("type", "text", "text", text));
        }
        return parts; // the template renders text items in any role
    }

    private static Map<String, Object> toolCall(JsonNode node, String path) {
        if (!node.isObject()) {
            throw ApiException.invalid(path, "'" + path + "' must be an object, got " + Json.kind(node));
        }
        String type = Json.string(node, "type", path + ".type", "function");
        if (!type.equals("function")) {
            throw ApiException.invalid(path + ".type", "'" + path + ".type' must be \"function\", got \"" + type + "\"");
        }
        ObjectNode fn = Json.objectField(node, "function", path + ".function");
        if (fn == null) {
            throw ApiException.invalid(path + ".function", "'" + path + ".function' is required");
        }
        String name = Json.string(fn, "name", path + ".function.name", null);
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid(path + ".function.name", "'" + path + ".function.name' is required");
        }
        Object args = Map.of();
        JsonNode a = fn.get("arguments");
        String ap = path + ".function.arguments";
        if (a != null && !a.isNull()) {
            JsonNode tree = a;
            if (a.isTextual()) { // OpenAI sends the arguments as a JSON text; the template iterates an object
                try {
                    tree = a.asText().isBlank() ? Json.object() : Json.MAPPER.readTree(a.asText());
                } catch (JsonProcessingException e) {
                    throw ApiException.invalid(ap, "'" + ap + "' is not valid JSON: " + e.getOriginalMessage());
                }
            }
            if (!(tree instanceof ObjectNode o)) {
                throw ApiException.invalid(ap, "'" + ap + "' must be a JSON object, got " + Json.kind(tree));
            }
            args = Json.plainObject(o);
        }
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("name", name);
        f.put("arguments", args);
        Map<String, Object> out = new LinkedHashMap<>();
        String id = Json.string(node, "id", path + ".id", null);
        if (id != null) {
            out.put("id", id);
        }
        out.put("type", "function");
        out.put("function", f);
        return out;
    }

    private static List<Map<String, Object>> tools(ObjectNode body) {
        ArrayNode arr = Json.arrayField(body, "tools", "tools");
        if (arr == null || arr.isEmpty()) {
            return null;
        }
        List<Map<String, Object>> out = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < arr.size(); i++) {
            String p = "tools[" + i + "]";
            JsonNode t = arr.get(i);
            if (!(t instanceof ObjectNode o)) {
                throw ApiException.invalid(p, "'" + p + "' must be an object, got " + Json.kind(t));
            }
            String type = Json.string(o, "type", p + ".type", null);
            if (!"function".equals(type)) {
                throw ApiException.invalid(p + ".type", "'" + p + ".type' must be \"function\", got " + (type == null ? "nothing" : "\"" + type + "\""));
            }
            ObjectNode fn = Json.objectField(o, "function", p + ".function");
            if (fn == null) {
                throw ApiException.invalid(p + ".function", "'" + p + ".function' is required");
            }
            String name = Json.string(fn, "name", p + ".function.name", null);
            if (name == null || !FUNCTION_NAME.matcher(name).matches()) {
                throw ApiException.invalid(p + ".function.name", "'" + p + ".function.name' must be 1-64 letters, digits, '_', '-', '.' or ':'"
                        + (name == null ? "" : ", got \"" + name + "\""));
            }
            if (!names.add(name)) {
                throw ApiException.invalid(p + ".function.name", "'" + p + ".function.name' \"" + name + "\" is declared twice");
            }
            Json.string(fn, "description", p + ".function.description", null);
            ObjectNode params = Json.objectField(fn, "parameters", p + ".function.parameters");
            if (params != null) {
                checkSchema(params, p + ".function.parameters");
            }
            Map<String, Object> tool = new LinkedHashMap<>();
            tool.put("type", "function");
            tool.put("function", Json.plainObject(fn));
            out.add(tool);
        }
        return out;
    }

    /** The grammar that enforces {@code schema}; a keyword the compiler does not support is a 400 naming it. */
    private static Grammar compileSchema(JsonNode schema, String path) {
        try {
            return JsonSchemaGrammar.fromSchema(schema);
        } catch (EdgeLmException e) {
            throw ApiException.invalid(path, e.getMessage());
        }
    }

    /** The parts of a JSON schema this server reads must be well-formed: an object whose types are known. */
    static void checkSchema(JsonNode schema, String path) {
        if (!(schema instanceof ObjectNode o)) {
            throw ApiException.invalid(path, "'" + path + "' must be a JSON schema object, got " + Json.kind(schema));
        }
        JsonNode type = o.get("type");
        if (type != null) {
            List<JsonNode> types = new ArrayList<>();
            if (type.isArray()) {
                type.forEach(types::add);
            } else {
                types.add(type);
            }
            for (JsonNode t : types) {
                if (!t.isTextual() || !SCHEMA_TYPES.contains(t.asText())) {
                    throw ApiException.invalid(path + ".type", "'" + path + ".type' must be one of " + SCHEMA_TYPES + ", got " + t);
                }
            }
        }
        JsonNode props = o.get("properties");
        if (props != null) {
            if (!props.isObject()) {
                throw ApiException.invalid(path + ".properties", "'" + path + ".properties' must be an object, got " + Json.kind(props));
            }
            props.properties().forEach(e -> checkSchema(e.getValue(), path + ".properties." + e.getKey()));
        }
        JsonNode items = o.get("items");
        if (items != null && !items.isBoolean()) {
            checkSchema(items, path + ".items");
        }
    }
}
