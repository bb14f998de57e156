package dev.edgelm.grammar;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Schemas and grammars written to make the compiler or the matcher spend without bound: each is refused with an
 * error that names the keyword (for a schema) or what went over, or is followed without a deep Java stack. The
 * sizes are those a request body of a few kilobytes can ask for; nothing here is timed (bounded work is what the
 * caps guarantee; the limits are in docs/grammar.md).
 */
class HostileSchemaTest {

    private static EdgeLmException refused(String schema) {
        return assertThrows(EdgeLmException.class, () -> JsonSchemaGrammar.fromSchema(schema));
    }

    private static void assertMentions(EdgeLmException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "'" + p + "' missing from: " + e.getMessage());
        }
    }

    /** Runs {@code body} on a thread with a 256 KiB stack: a recursion as deep as the input would overflow it. */
    private static void onASmallStack(Runnable body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "small-stack", 256 * 1024);
        t.start();
        t.join();
        if (failure.get() instanceof AssertionError a) {
            throw a;
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void refCyclesThatNeverProduceAValueAreNamed() {
        assertMentions(refused("{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}}}"),
                "'$ref' cycle", "left-recursive");
        assertMentions(refused("{\"$ref\":\"#\"}"), "'$ref' cycle");
        assertMentions(refused("{\"anyOf\":[{\"$ref\":\"#\"},{\"type\":\"null\"}]}"), "'$ref' cycle");
    }

    @Test
    void aDeepRefChainStopsAtTheDepthLimit() {
        StringBuilder sb = new StringBuilder("{\"$ref\":\"#/$defs/a0\",\"$defs\":{");
        for (int i = 0; i < 2000; i++) {
            sb.append(i > 0 ? "," : "").append("\"a").append(i).append("\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/a")
                    .append(i + 1).append("\"}}");
        }
        sb.append(",\"a2000\":{\"type\":\"integer\"}}}");
        assertMentions(refused(sb.toString()), "nested more than 64 levels");
    }

    @Test
    void countsOfABillionAreRefusedByName() {
        assertMentions(refused("{\"type\":\"array\",\"maxItems\":1000000000}"), "#/maxItems", "up to 100000");
        assertMentions(refused("{\"type\":\"array\",\"minItems\":1000000000}"), "#/minItems");
        assertMentions(refused("{\"type\":\"string\",\"maxLength\":1e9}"), "#/maxLength");
        assertMentions(refused("{\"type\":\"string\",\"minLength\":2.5}"), "#/minLength");
    }

    @Test
    void boundsThatAddUpGoOverTheBudgetAtTheKeywordThatCrossedIt() {
        // one maxLength of 100000 fits; two do not: the second one is named (before, 200 of them took minutes)
        assertTrue(GrammarMatcher.matches(JsonSchemaGrammar.fromSchema("{\"type\":\"string\",\"maxLength\":100000}"), "\"abc\""));
        StringBuilder sb = new StringBuilder("{\"type\":\"object\",\"properties\":{");
        for (int i = 0; i < 200; i++) {
            sb.append(i > 0 ? "," : "").append("\"p").append(i).append("\":{\"type\":\"string\",\"maxLength\":100000}");
        }
        sb.append("}}");
        assertMentions(refused(sb.toString()), "#/properties/p1/maxLength", "262144 symbols");
        assertMentions(refused("{\"type\":\"array\",\"items\":{\"type\":\"string\",\"maxLength\":100000},"
                + "\"maxItems\":100000}"), "JSON schema at #/maxItems", "262144");
    }

    @Test
    void hugeEnumsAreRefused() {
        StringBuilder many = new StringBuilder("{\"enum\":[");
        for (int i = 0; i < 100_000; i++) {
            many.append(i > 0 ? "," : "").append(i);
        }
        assertMentions(refused(many.append("]}").toString()), "#/enum", "100000 values", "4096");
        StringBuilder longValues = new StringBuilder("{\"enum\":[");
        String filler = "x".repeat(100);
        for (int i = 0; i < 4000; i++) {
            longValues.append(i > 0 ? "," : "").append('"').append(filler).append(i).append('"');
        }
        assertMentions(refused(longValues.append("]}").toString()), "#/enum", "symbols");
        String big = "{\"const\":\"" + "y".repeat(300_000) + "\"}";
        assertMentions(refused(big), "#/const");
    }

    @Test
    void wideAnyOfIsRefusedAndOpenAlternativesAreCappedWhenCompiled() {
        StringBuilder wide = new StringBuilder("{\"anyOf\":[");
        for (int i = 0; i < 5000; i++) {
            wide.append(i > 0 ? "," : "").append("{\"const\":").append(i).append('}');
        }
        assertMentions(refused(wide.append("]}").toString()), "#/anyOf", "5000 branches");
        // 64 x 64 nested branches, each a different constant: 4096 * 64 alternatives open before the first byte,
        // past the matcher's cap: refused when compiled, not at the first token
        StringBuilder nested = new StringBuilder("{\"anyOf\":[");
        for (int i = 0; i < 64; i++) {
            nested.append(i > 0 ? "," : "").append("{\"anyOf\":[");
            for (int j = 0; j < 64; j++) {
                nested.append(j > 0 ? "," : "").append("{\"enum\":[");
                for (int k = 0; k < 3; k++) {
                    nested.append(k > 0 ? "," : "").append('"').append((char) ('a' + k)).append(i).append('-').append(j).append('"');
                }
                nested.append("]}");
            }
            nested.append("]}");
        }
        assertMentions(refused(nested.append("]}").toString()), "too many alternatives open at once");
    }

    /** Each level an array of one, or of up to two, of the next level: "[[[..." keeps 2^depth parses open. */
    private static String doubling(int levels) {
        StringBuilder sb = new StringBuilder("{\"$ref\":\"#/$defs/n0\",\"$defs\":{");
        for (int i = 0; i < levels; i++) {
            String next = "{\"$ref\":\"#/$defs/n" + (i + 1) + "\"}";
            sb.append(i > 0 ? "," : "").append("\"n").append(i).append("\":{\"anyOf\":[{\"type\":\"array\",\"items\":")
                    .append(next).append(",\"minItems\":1,\"maxItems\":1},{\"type\":\"array\",\"items\":").append(next)
                    .append(",\"minItems\":1,\"maxItems\":2}]}");
        }
        return sb.append(",\"n").append(levels).append("\":{\"type\":\"integer\"}}}").toString();
    }

    @Test
    void anyOfThatDoublesTheOpenParsesPerLevelStaysBounded() {
        Grammar shallow = JsonSchemaGrammar.fromSchema(doubling(8));
        assertTrue(GrammarMatcher.matches(shallow, "[[[[[[[[7]]]]]]]]"));
        assertTrue(GrammarMatcher.matches(shallow, "[[[[[[[[7],[8]]]]]]]]"));
        assertFalse(GrammarMatcher.matches(shallow, "[[[[[[[[7]]]]]]]"));

        // 18 levels: compiled at once (the grammar is linear in the schema); while decoding, the mask at depth
        // 10 (1024 parses, each with three ways to go on) is computed, and the step past the matcher's cap (at
        // depth 12: 4096 x 3) is a clear error
        Grammar deep = JsonSchemaGrammar.fromSchema(doubling(18));
        byte[][] bytes = new byte[128][];
        for (int b = 0; b < 128; b++) {
            bytes[b] = new byte[] {(byte) b};
        }
        GrammarConstraint c = new GrammarConstraint(deep, new Vocabulary(bytes));
        for (int i = 0; i < 10; i++) {
            c.accept('[');
        }
        assertTrue(c.allows('['));
        assertTrue(c.allows(' '));
        assertFalse(c.allows(']'), "each array holds at least one item");
        assertFalse(c.allows('7'), "the integer is 8 levels further down");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> {
            for (int i = 10; i < 18; i++) {
                c.accept('[');
                c.allows('[');
            }
        });
        assertMentions(e, "too ambiguous", "8192");
    }

    @Test
    void thousandsOfOptionalPropertiesNeedNoDeepStack() throws InterruptedException {
        assertMentions(refused(properties(20_000)), "#/properties", "20000 properties", "2048");
        String schema = properties(2000);
        onASmallStack(() -> {
            Grammar g = JsonSchemaGrammar.fromSchema(schema);
            assertTrue(GrammarMatcher.matches(g, "{\"p1999\": 1}"));
            assertTrue(GrammarMatcher.matches(g, "{\"p0\": 1, \"p1999\": 2}"));
            assertFalse(GrammarMatcher.matches(g, "{\"p1999\": 1, \"p0\": 2}"));
        });
    }

    private static String properties(int n) {
        StringBuilder sb = new StringBuilder("{\"type\":\"object\",\"properties\":{");
        for (int i = 0; i < n; i++) {
            sb.append(i > 0 ? "," : "").append("\"p").append(i).append("\":{\"type\":\"integer\"}");
        }
        return sb.append("}}").toString();
    }

    @Test
    void gbnfRepetitionsThatUnrollTooFarAreRefused() {
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Grammar.parse(
                "root ::= \"a\"{0,999999} \"b\"{0,999999} \"c\"{0,999999}\n"));
        assertMentions(e, "unroll past", "'root'");
    }

    @Test
    void aLongChainOfEmptyMatchesNeedsNoDeepStack() throws InterruptedException {
        // 100000 rules that match only "" before the "!": expanding the first step walks all of them
        onASmallStack(() -> {
            Grammar g = Grammar.parse("root ::= e{100000} \"!\"\ne ::= \"\"\n");
            assertTrue(GrammarMatcher.matches(g, "!"));
            assertFalse(GrammarMatcher.matches(g, "!!"));
            assertFalse(GrammarMatcher.matches(g, ""));
        });
    }
}
