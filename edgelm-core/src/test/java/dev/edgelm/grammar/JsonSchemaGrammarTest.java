package dev.edgelm.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The schema compiler against llama.cpp: for schemas from llama.cpp's own tests, the grammar EdgeLM builds
 * accepts exactly what the GBNF llama.cpp produces accepts (both run by the matcher: hand-written valid and
 * invalid texts, then random edits of them), and the keywords outside llama.cpp's rules are refused by name.
 */
class JsonSchemaGrammarTest {
    record Case(String name, String schema, String gbnf, List<String> accept, List<String> reject) {}

    static List<Case> cases() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("src/test/resources/grammar/llama-cpp-schema-grammars.txt"));
        List<Case> out = new ArrayList<>();
        String name = null;
        String section = null;
        StringBuilder schema = new StringBuilder();
        StringBuilder gbnf = new StringBuilder();
        List<String> accept = new ArrayList<>();
        List<String> reject = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("#") && name == null) {
                continue;
            }
            if (line.startsWith("== ")) {
                if (name != null) {
                    out.add(new Case(name, schema.toString(), gbnf.toString(), List.copyOf(accept), List.copyOf(reject)));
                }
                name = line.substring(3);
                schema.setLength(0);
                gbnf.setLength(0);
                accept.clear();
                reject.clear();
            } else if (line.startsWith("-- ")) {
                section = line.substring(3);
            } else if ("schema".equals(section)) {
                schema.append(line).append('\n');
            } else if ("gbnf".equals(section)) {
                gbnf.append(line).append('\n');
            } else if ("accept".equals(section)) {
                accept.add(line);
            } else if ("reject".equals(section)) {
                reject.add(line);
            }
        }
        out.add(new Case(name, schema.toString(), gbnf.toString(), List.copyOf(accept), List.copyOf(reject)));
        return out;
    }

    @Test
    void agreesWithLlamaCppGrammarsOnValidInvalidAndMutatedTexts() throws IOException {
        List<Case> cases = cases();
        assertEquals(16, cases.size());
        Random r = new Random(11);
        String alphabet = "{}[]:,\" 0123456789.-eEtrufalsnabcd\\\n";
        for (Case c : cases) {
            Grammar mine = JsonSchemaGrammar.fromSchema(c.schema());
            Grammar llama = Grammar.parse(c.gbnf());
            for (String t : c.accept()) {
                assertTrue(GrammarMatcher.matches(llama, t), c.name() + ": llama.cpp's grammar accepts " + t);
                assertTrue(GrammarMatcher.matches(mine, t), c.name() + ": accepts " + t + "\n" + mine);
            }
            for (String t : c.reject()) {
                assertFalse(GrammarMatcher.matches(llama, t), c.name() + ": llama.cpp's grammar rejects " + t);
                assertFalse(GrammarMatcher.matches(mine, t), c.name() + ": rejects " + t + "\n" + mine);
            }
            List<String> seeds = new ArrayList<>(c.accept());
            seeds.addAll(c.reject());
            for (int i = 0; i < 400; i++) {
                StringBuilder sb = new StringBuilder(seeds.get(r.nextInt(seeds.size())));
                int edits = 1 + r.nextInt(3);
                for (int e = 0; e < edits; e++) {
                    int at = sb.isEmpty() ? 0 : r.nextInt(sb.length() + 1);
                    switch (r.nextInt(3)) {
                        case 0 -> sb.insert(at, alphabet.charAt(r.nextInt(alphabet.length())));
                        case 1 -> {
                            if (at < sb.length()) {
                                sb.deleteCharAt(at);
                            }
                        }
                        default -> {
                            if (at < sb.length()) {
                                sb.setCharAt(at, alphabet.charAt(r.nextInt(alphabet.length())));
                            }
                        }
                    }
                }
                String t = sb.toString();
                assertEquals(GrammarMatcher.matches(llama, t), GrammarMatcher.matches(mine, t), c.name() + ": " + t);
            }
        }
    }

    private static boolean ok(String schema, String text) {
        return GrammarMatcher.matches(JsonSchemaGrammar.fromSchema(schema), text);
    }

    @Test
    void nullAndTypeListsAndOneOf() {
        assertTrue(ok("{\"type\":\"null\"}", "null"));
        assertTrue(ok("{\"type\":[\"string\",\"null\"]}", "null"));
        assertTrue(ok("{\"type\":[\"string\",\"null\"]}", "\"x\""));
        assertFalse(ok("{\"type\":[\"string\",\"null\"]}", "1"));
        String oneOf = "{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"boolean\"}]}";
        assertTrue(ok(oneOf, "12"));
        assertTrue(ok(oneOf, "false"));
        assertFalse(ok(oneOf, "\"x\""));
    }

    @Test
    void recursiveRefsThroughDefs() {
        String tree = """
                {"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{
                 "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":3}},
                 "required":["v"]}}}""";
        assertTrue(ok(tree, "{\"v\":1}"));
        assertTrue(ok(tree, "{\"v\":1,\"kids\":[{\"v\":2},{\"v\":3,\"kids\":[{\"v\":4}]}]}"));
        assertFalse(ok(tree, "{\"v\":1,\"kids\":[{}]}"));
        assertFalse(ok(tree, "{\"v\":1,\"kids\":[{\"v\":1},{\"v\":1},{\"v\":1},{\"v\":1}]}"));
    }

    @Test
    void jsonObjectIsAnyObjectAndNothingElse() {
        Grammar g = JsonSchemaGrammar.anyObject();
        assertTrue(GrammarMatcher.matches(g, "{\"a\":[1,{\"b\":null}]}"));
        assertFalse(GrammarMatcher.matches(g, "[1]"));
        assertFalse(GrammarMatcher.matches(g, "\"a\""));
        assertTrue(GrammarMatcher.matches(JsonSchemaGrammar.anyValue(), "[1]"));
        assertTrue(ok("{}", "\"a\""));
        assertTrue(ok("true", "3"));
    }

    @Test
    void unsupportedKeywordsAreNamed() {
        for (String kw : new String[] {"pattern", "format", "minimum", "allOf", "not", "patternProperties", "uniqueItems"}) {
            String schema = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"" + kw + "\":1}}}";
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema(schema));
            assertTrue(e.getMessage().contains("'" + kw + "'"), e.getMessage());
            assertTrue(e.getMessage().contains("#/properties/x"), e.getMessage());
        }
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{\"$ref\":\"other.json#/a\"}"));
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{\"$ref\":\"#/$defs/missing\"}"));
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{\"type\":\"float\"}"));
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{\"type\":\"string\",\"maxLength\":-1}"));
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{\"required\":[\"a\"]}"));
        assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema("{not json"));
        EdgeLmException loop = assertThrows(EdgeLmException.class,
                () -> JsonSchemaGrammar.fromSchema("{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}}}"));
        assertTrue(loop.getMessage().contains("left-recursive"), loop.getMessage());
    }
}
