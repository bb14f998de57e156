package dev.edgelm.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON schema as a grammar, by llama.cpp's rules ({@code common/json-schema-to-grammar.cpp}): the same
 * primitive rules (numbers of at most 16 integral digits, strings of JSON characters, bounded whitespace
 * {@code space}), objects with the required properties in schema order followed by the optional ones in
 * order, each optional, {@code additionalProperties} false unless the schema says otherwise, arrays as
 * {@code item ("," space item){m-1,n-1}}. No whitespace before or after the top-level value.
 *
 * <p>Supported keywords: {@code type} (one or a list), {@code properties}, {@code required},
 * {@code additionalProperties} (false; true or a schema only on an object without {@code properties}),
 * {@code enum}, {@code const}, {@code items}, {@code minItems}, {@code maxItems}, {@code minLength},
 * {@code maxLength}, {@code anyOf}, {@code oneOf} (as {@code anyOf}: branches should not overlap),
 * {@code $ref} to {@code #...} pointers ({@code $defs}, {@code definitions}); annotations ({@code title},
 * {@code description}, ...) are ignored. Any other keyword is an error naming it, never silently skipped.
 */
public final class JsonSchemaGrammar {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_DEPTH = 64;
    /** Largest {@code minItems} / {@code maxItems} / {@code minLength} / {@code maxLength}. */
    static final int MAX_COUNT = 100_000;
    /**
     * The compile budget: symbols the flattened grammar may hold (a repetition {@code x{m,n}} costs m + 2(n - m),
     * a literal its length, each alternative, property and rule a few). A hostile schema (bounds that add up,
     * huge enums, anyOf over anyOf) is refused while it is read, naming the keyword that went over, instead of
     * taking minutes and gigabytes to compile. The largest single bound ({@link #MAX_COUNT}) fits.
     */
    static final int MAX_SYMBOLS = 262_144;
    /** Values of one {@code enum}, branches of one {@code anyOf} / {@code oneOf}. */
    static final int MAX_ALTERNATIVES = 4096;
    /**
     * Properties of one object: after a comma any later optional property may come next, each behind three forms
     * of whitespace, so 2,048 of them keep about 6,000 parses open, under the matcher's 8,192.
     */
    static final int MAX_PROPERTIES = 2048;

    private static final Set<String> ANNOTATIONS = Set.of("$schema", "$id", "$comment", "title", "description",
            "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs", "definitions");
    private static final Set<String> SUPPORTED = Set.of("type", "properties", "required", "additionalProperties",
            "enum", "const", "items", "minItems", "maxItems", "minLength", "maxLength", "anyOf", "oneOf", "$ref");
    private static final Set<String> TYPES = Set.of("object", "array", "string", "number", "integer", "boolean", "null");

    /** llama.cpp's primitive rules, as GBNF, with the rules each one uses. */
    private static final Map<String, String[]> PRIMITIVES = new LinkedHashMap<>();

    static {
        PRIMITIVES.put("space", new String[] {"| \" \" | \"\\n\"{1,2} [ \\t]{0,20}"});
        PRIMITIVES.put("boolean", new String[] {"(\"true\" | \"false\")"});
        PRIMITIVES.put("decimal-part", new String[] {"[0-9]{1,16}"});
        PRIMITIVES.put("integral-part", new String[] {"[0] | [1-9] [0-9]{0,15}"});
        PRIMITIVES.put("number", new String[] {
            "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)?", "integral-part", "decimal-part"});
        PRIMITIVES.put("integer", new String[] {"(\"-\"? integral-part)", "integral-part"});
        PRIMITIVES.put("value", new String[] {
            "object | array | string | number | boolean | null", "object", "array", "string", "number", "boolean", "null"});
        PRIMITIVES.put("object", new String[] {
            "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? space \"}\"", "string", "value"});
        PRIMITIVES.put("array", new String[] {"\"[\" space ( value (\",\" space value)* )? space \"]\"", "value"});
        PRIMITIVES.put("char", new String[] {"[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})"});
        PRIMITIVES.put("string", new String[] {"\"\\\"\" char* \"\\\"\"", "char"});
        PRIMITIVES.put("null", new String[] {"\"null\""});
    }

    private final JsonNode document;
    private final Map<String, Expr> rules = new LinkedHashMap<>();
    private final Map<String, String> refRules = new HashMap<>();
    /** Symbols charged so far against {@link #MAX_SYMBOLS}. */
    private long symbols;

    private JsonSchemaGrammar(JsonNode document) {
        this.document = document;
        primitive("space");
    }

    /** The grammar of {@code schema} (a JSON schema document). */
    public static Grammar fromSchema(JsonNode schema) {
        JsonSchemaGrammar c = new JsonSchemaGrammar(schema);
        c.rules.put(Grammar.ROOT, Expr.EMPTY);
        c.rules.put(Grammar.ROOT, c.body(schema, Grammar.ROOT, "#", 0));
        Grammar grammar;
        try {
            grammar = new Grammar(c.rules);
        } catch (EdgeLmException e) {
            if (e.getMessage().contains("left-recursive")) { // only $ref can make a schema's grammar recurse
                throw new EdgeLmException("JSON schema: a '$ref' cycle that never produces a value ("
                        + e.getMessage().substring("grammar: ".length()) + ")");
            }
            throw e;
        }
        try {
            new GrammarMatcher(grammar); // the first step's parses, bounded: fails here, not at the first token
        } catch (EdgeLmException e) {
            throw new EdgeLmException("JSON schema: too many alternatives open at once (enum, anyOf, oneOf, type lists): "
                    + e.getMessage());
        }
        return grammar;
    }

    /** The grammar of a schema given as JSON text. */
    public static Grammar fromSchema(String schemaJson) {
        JsonNode node;
        try {
            node = JSON.readTree(schemaJson);
        } catch (JsonProcessingException e) {
            throw new EdgeLmException("JSON schema is not valid JSON: " + e.getOriginalMessage());
        }
        if (node == null) {
            throw new EdgeLmException("JSON schema is empty");
        }
        return fromSchema(node);
    }

    /** Any JSON object ({@code response_format: json_object}). */
    public static Grammar anyObject() {
        JsonSchemaGrammar c = new JsonSchemaGrammar(null);
        c.rules.put(Grammar.ROOT, c.primitive("object"));
        return new Grammar(c.rules);
    }

    /** Any JSON value (the empty schema). */
    public static Grammar anyValue() {
        JsonSchemaGrammar c = new JsonSchemaGrammar(null);
        c.rules.put(Grammar.ROOT, c.primitive("value"));
        return new Grammar(c.rules);
    }

    private static EdgeLmException error(String path, String what) {
        return new EdgeLmException("JSON schema at " + path + ": " + what);
    }

    /** Charges {@code n} symbols of the grammar to {@code keyword} at {@code path}; over the budget is an error. */
    private void charge(long n, String path, String keyword) {
        symbols += n;
        if (symbols > MAX_SYMBOLS) {
            throw error(path + "/" + keyword, "the schema's grammar grows past " + MAX_SYMBOLS + " symbols here ('"
                    + keyword + "': bounds, enums, properties and branches add up); make the schema smaller");
        }
    }

    private static void checkAlternatives(int n, String path, String keyword, String what) {
        if (n > MAX_ALTERNATIVES) {
            throw error(path + "/" + keyword, n + " " + what + ", more than the " + MAX_ALTERNATIVES + " supported");
        }
    }

    private Expr primitive(String name) {
        if (!rules.containsKey(name)) {
            String[] def = PRIMITIVES.get(name);
            rules.put(name, Expr.EMPTY); // reserve: primitives refer to each other
            rules.put(name, Gbnf.parseExpr(def[0]));
            for (int i = 1; i < def.length; i++) {
                primitive(def[i]);
            }
        }
        return Expr.ref(name);
    }

    private static String ruleName(String s) {
        String n = s.replaceAll("[^a-zA-Z0-9-]+", "-");
        return n.isEmpty() ? "r" : n;
    }

    /** Adds {@code body} as a rule named after {@code name} (another name if taken by a different body). */
    private String addRule(String name, Expr body) {
        String base = ruleName(name);
        String key = base;
        for (int i = 0; rules.containsKey(key) && !rules.get(key).equals(body); i++) {
            key = base + i;
        }
        rules.put(key, body);
        return key;
    }

    /** A reference to a rule for {@code schema} (the primitive or rule itself when the body is just one). */
    private Expr visit(JsonNode schema, String name, String path, int depth) {
        Expr body = body(schema, name, path, depth);
        return body instanceof Expr.Ref ? body : Expr.ref(addRule(name, body));
    }

    private Expr body(JsonNode schema, String name, String path, int depth) {
        if (depth > MAX_DEPTH) {
            throw error(path, "nested more than " + MAX_DEPTH + " levels deep");
        }
        if (schema.isBoolean()) {
            if (!schema.booleanValue()) {
                throw error(path, "the schema 'false' allows no value");
            }
            return primitive("value");
        }
        if (!schema.isObject()) {
            throw error(path, "a schema must be an object or a boolean, got " + schema.getNodeType().toString().toLowerCase());
        }
        for (Iterator<String> it = schema.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!SUPPORTED.contains(k) && !ANNOTATIONS.contains(k)) {
                throw error(path, "unsupported keyword '" + k + "'");
            }
        }
        String prefix = name.equals(Grammar.ROOT) ? "" : name + "-";
        if (schema.has("$ref")) {
            for (Iterator<String> it = schema.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (!k.equals("$ref") && !ANNOTATIONS.contains(k)) {
                    throw error(path, "keyword '" + k + "' next to '$ref' is not supported");
                }
            }
            return ref(schema.get("$ref"), path, depth);
        }
        if (schema.has("anyOf") || schema.has("oneOf")) {
            String kw = schema.has("anyOf") ? "anyOf" : "oneOf";
            if (schema.has("anyOf") && schema.has("oneOf")) {
                throw error(path, "'anyOf' and 'oneOf' together are not supported");
            }
            for (Iterator<String> it = schema.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (!k.equals(kw) && !k.equals("type") && !ANNOTATIONS.contains(k)) {
                    throw error(path, "keyword '" + k + "' next to '" + kw + "' is not supported");
                }
            }
            JsonNode list = schema.get(kw);
            if (!list.isArray() || list.isEmpty()) {
                throw error(path + "/" + kw, "must be a non-empty array of schemas");
            }
            checkAlternatives(list.size(), path, kw, "branches");
            charge(list.size(), path, kw);
            List<Expr> options = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                String alt = name.equals(Grammar.ROOT) ? "alternative-" + i : prefix + i;
                options.add(visit(list.get(i), alt, path + "/" + kw + "/" + i, depth + 1));
            }
            return new Expr.Alt(options);
        }
        if (schema.has("const")) {
            return literal(schema.get("const"), path, "const");
        }
        if (schema.has("enum")) {
            JsonNode list = schema.get("enum");
            if (!list.isArray() || list.isEmpty()) {
                throw error(path + "/enum", "must be a non-empty array");
            }
            checkAlternatives(list.size(), path, "enum", "values");
            List<Expr> options = new ArrayList<>();
            for (JsonNode v : list) {
                options.add(literal(v, path, "enum"));
            }
            return options.size() == 1 ? options.getFirst() : new Expr.Alt(options);
        }
        JsonNode type = schema.get("type");
        if (type != null && type.isArray()) {
            if (type.isEmpty()) {
                throw error(path + "/type", "must not be an empty list");
            }
            List<Expr> options = new ArrayList<>();
            Set<String> seen = new LinkedHashSet<>();
            for (JsonNode t : type) {
                String tn = typeName(t, path);
                if (seen.add(tn)) {
                    Expr e = typed(tn, schema, name.equals(Grammar.ROOT) ? "alternative-" + options.size() : prefix + tn, path, depth);
                    options.add(e instanceof Expr.Ref ? e : Expr.ref(addRule(
                            name.equals(Grammar.ROOT) ? "alternative-" + options.size() : prefix + tn, e)));
                }
            }
            return options.size() == 1 ? options.getFirst() : new Expr.Alt(options);
        }
        String t;
        if (type != null) {
            t = typeName(type, path);
        } else if (schema.has("properties") || schema.has("additionalProperties") || schema.has("required")) {
            t = "object";
        } else if (schema.has("items") || schema.has("minItems") || schema.has("maxItems")) {
            t = "array";
        } else if (schema.has("minLength") || schema.has("maxLength")) {
            t = "string";
        } else {
            return primitive("value");
        }
        return typed(t, schema, name, path, depth);
    }

    private static String typeName(JsonNode t, String path) {
        if (!t.isTextual() || !TYPES.contains(t.textValue())) {
            throw error(path + "/type", "unknown type " + t + " (expected one of " + TYPES + ")");
        }
        return t.textValue();
    }

    private Expr typed(String type, JsonNode schema, String name, String path, int depth) {
        return switch (type) {
            case "object" -> object(schema, name, path, depth);
            case "array" -> array(schema, name, path, depth);
            case "string" -> string(schema, path);
            default -> primitive(type);
        };
    }

    private Expr literal(JsonNode value, String path, String keyword) {
        String text;
        try {
            text = JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        charge(1 + text.length(), path, keyword);
        return Expr.lit(text);
    }

    private Expr ref(JsonNode refNode, String path, int depth) {
        if (!refNode.isTextual()) {
            throw error(path + "/$ref", "must be a string");
        }
        String ref = refNode.textValue();
        String known = refRules.get(ref);
        if (known != null) {
            return Expr.ref(known);
        }
        if (!ref.startsWith("#")) {
            throw error(path + "/$ref", "only references inside the schema (#/...) are supported, got '" + ref + "'");
        }
        JsonNode target = document.at(ref.substring(1));
        if (target.isMissingNode()) {
            throw error(path + "/$ref", "'" + ref + "' does not point into the schema");
        }
        String name = ruleName("ref" + ref.substring(1).replace('/', '-'));
        String key = name;
        for (int i = 0; rules.containsKey(key); i++) {
            key = name + i;
        }
        rules.put(key, Expr.EMPTY); // reserved: the target may refer to itself
        refRules.put(ref, key);
        charge(1, path, "$ref");
        rules.put(key, body(target, key, ref, depth + 1));
        return Expr.ref(key);
    }

    private static String quoted(String key) {
        try {
            return JSON.writeValueAsString(key);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int count(JsonNode schema, String keyword, String path, int otherwise) {
        JsonNode n = schema.get(keyword);
        if (n == null) {
            return otherwise;
        }
        if (!n.canConvertToExactIntegral() || n.asLong() < 0 || n.asLong() > MAX_COUNT) {
            throw error(path + "/" + keyword, "must be a non-negative integer up to " + MAX_COUNT + ", got " + n);
        }
        return n.asInt();
    }

    /** What {@code x{min,max}} flattens to: min copies, then two symbols and a rule per optional one. */
    private void chargeRepeat(int min, int max, String path, String keyword) {
        charge(4 + (long) min + (max < 0 ? 2 : 2L * (max - min)), path, keyword);
    }

    private Expr string(JsonNode schema, String path) {
        int min = count(schema, "minLength", path, 0);
        int max = count(schema, "maxLength", path, -1);
        if (max >= 0 && max < min) {
            throw error(path, "maxLength " + max + " is below minLength " + min);
        }
        if (min == 0 && max < 0) {
            return primitive("string");
        }
        chargeRepeat(min, max, path, max >= 0 ? "maxLength" : "minLength");
        Expr ch = primitive("char");
        return Expr.seq(Expr.lit("\""), new Expr.Repeat(ch, min, max), Expr.lit("\""));
    }

    private Expr array(JsonNode schema, String name, String path, int depth) {
        int min = count(schema, "minItems", path, 0);
        int max = count(schema, "maxItems", path, -1);
        if (max >= 0 && max < min) {
            throw error(path, "maxItems " + max + " is below minItems " + min);
        }
        JsonNode items = schema.get("items");
        if (items != null && items.isArray()) {
            throw error(path + "/items", "a list of item schemas (tuple) is not supported");
        }
        String prefix = name.equals(Grammar.ROOT) ? "" : name + "-";
        Expr item = items == null ? primitive("value") : visit(items, prefix + "item", path + "/items", depth + 1);
        Expr space = Expr.ref("space");
        List<Expr> parts = new ArrayList<>(List.of(Expr.lit("["), space));
        chargeRepeat(min, max, path, max >= 0 ? "maxItems" : "minItems");
        if (max != 0) {
            Expr more = Expr.seq(Expr.lit(","), space, item);
            if (min == 0) {
                parts.add(Expr.opt(Expr.seq(item, new Expr.Repeat(more, 0, max < 0 ? -1 : max - 1))));
            } else {
                parts.add(item);
                parts.add(new Expr.Repeat(more, min - 1, max < 0 ? -1 : max - 1));
            }
        }
        parts.add(space);
        parts.add(Expr.lit("]"));
        return new Expr.Seq(parts);
    }

    private Expr object(JsonNode schema, String name, String path, int depth) {
        JsonNode props = schema.get("properties");
        if (props != null && !props.isObject()) {
            throw error(path + "/properties", "must be an object");
        }
        JsonNode additional = schema.get("additionalProperties");
        boolean hasProps = props != null && !props.isEmpty();
        JsonNode req = schema.get("required");
        Set<String> required = new LinkedHashSet<>();
        if (req != null) {
            if (!req.isArray()) {
                throw error(path + "/required", "must be an array of property names");
            }
            for (JsonNode r : req) {
                if (!r.isTextual()) {
                    throw error(path + "/required", "must be an array of property names");
                }
                if (props == null || !props.has(r.textValue())) {
                    throw error(path + "/required", "required property '" + r.textValue() + "' is not in 'properties'");
                }
                required.add(r.textValue());
            }
        }
        Expr space = Expr.ref("space");
        if (!hasProps) {
            if (additional == null && props == null || additional != null && additional.isBoolean() && additional.booleanValue()) {
                return primitive("object");
            }
            if (additional == null || additional.isBoolean()) { // properties: {} or additionalProperties: false
                return Expr.seq(Expr.lit("{"), space, space, Expr.lit("}"));
            }
            String prefix = name.equals(Grammar.ROOT) ? "" : name + "-";
            Expr value = visit(additional, prefix + "additional-value", path + "/additionalProperties", depth + 1);
            Expr kv = Expr.ref(addRule(prefix + "additional-kv", Expr.seq(primitive("string"), Expr.lit(":"), space, value)));
            return Expr.seq(Expr.lit("{"), space,
                    Expr.opt(Expr.seq(kv, Expr.star(Expr.seq(Expr.lit(","), space, kv)))), space, Expr.lit("}"));
        }
        if (additional != null && !(additional.isBoolean() && !additional.booleanValue())) {
            throw error(path + "/additionalProperties", "only 'false' is supported next to 'properties'");
        }
        String prefix = name.equals(Grammar.ROOT) ? "" : name + "-";
        if (props.size() > MAX_PROPERTIES) {
            throw error(path + "/properties", props.size() + " properties, more than the " + MAX_PROPERTIES + " supported");
        }
        Map<String, Expr> kvs = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> p = it.next();
            String pn = prefix + p.getKey();
            charge(8 + 2L * p.getKey().length(), path, "properties"); // its key-value rule, its optional-subset rule
            Expr value = visit(p.getValue(), pn, path + "/properties/" + p.getKey(), depth + 1);
            kvs.put(p.getKey(), Expr.ref(addRule(pn + "-kv", Expr.seq(Expr.lit(quoted(p.getKey())),
                    space, Expr.lit(":"), space, value))));
        }
        List<Expr> parts = new ArrayList<>(List.of(Expr.lit("{"), space));
        List<String> optional = new ArrayList<>();
        boolean first = true;
        for (String k : kvs.keySet()) {
            if (required.contains(k)) {
                if (!first) {
                    parts.add(Expr.lit(","));
                    parts.add(space);
                }
                parts.add(kvs.get(k));
                first = false;
            } else {
                optional.add(k);
            }
        }
        if (!optional.isEmpty()) {
            // llama.cpp's scheme: any subset of the optional properties, in schema order
            int k = optional.size();
            Expr[] rest = new Expr[k];
            for (int i = k - 2; i >= 0; i--) {
                Expr next = Expr.opt(Expr.seq(Expr.lit(","), space, kvs.get(optional.get(i + 1))));
                Expr body = i == k - 2 ? next : Expr.seq(next, rest[i + 1]);
                rest[i] = Expr.ref(addRule(prefix + optional.get(i) + "-rest", body));
            }
            List<Expr> options = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                options.add(i < k - 1 ? Expr.seq(kvs.get(optional.get(i)), rest[i]) : kvs.get(optional.get(i)));
            }
            Expr any = options.size() == 1 ? options.getFirst() : new Expr.Alt(options);
            parts.add(Expr.opt(first ? any : Expr.seq(Expr.lit(","), space, any)));
        }
        parts.add(space);
        parts.add(Expr.lit("}"));
        return new Expr.Seq(parts);
    }
}
