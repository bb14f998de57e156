package dev.edgelm.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** GBNF parsing and the byte-level matcher on hand-derived cases. */
class GbnfTest {
    private static boolean m(String gbnf, String text) {
        return GrammarMatcher.matches(Grammar.parse(gbnf), text);
    }

    @Test
    void literalsClassesAndEscapes() {
        String g = """
                # a comment
                root ::= "a\\"b\\n" [x-z\\]] [^0-9] "\\x41\\u00e9" .   # trailing comment
                """;
        assertTrue(m(g, "a\"b\n]!Aé\u4e2d"));
        assertTrue(m(g, "a\"b\nzqAé."));
        assertFalse(m(g, "a\"b\nwqAé."), "w is outside [x-z\\]]");
        assertFalse(m(g, "a\"b\nx]qAé."), "one character per class");
        assertFalse(m(g, "a\"b\nx5Aé."), "a digit is excluded by [^0-9]");
        assertFalse(m(g, "a\"b\nxqAé"), "the final . needs one character");
    }

    @Test
    void repetitionsAndGroups() {
        String g = "root ::= (\"ab\" | \"c\")+ d{2,3} e? f{2} g{1,}\nd ::= \"d\"\ne ::= \"e\"\nf ::= \"f\"\ng ::= \"g\"\n";
        assertTrue(m(g, "abddffg"));
        assertTrue(m(g, "cabcdddeffggg"));
        assertFalse(m(g, "ddffg"), "+ needs one");
        assertFalse(m(g, "abddddffg"), "{2,3}");
        assertFalse(m(g, "abdffg"), "{2,3}");
        assertFalse(m(g, "abddfffg"), "{2}");
        assertFalse(m(g, "abddff"), "{1,}");
    }

    @Test
    void multiLineRulesAndEmptyAlternatives() {
        String g = """
                root ::= item (
                    "," item
                  )*
                item ::= | "x"
                  | "y"
                """;
        assertTrue(m(g, ""));
        assertTrue(m(g, "x,,y"));
        assertFalse(m(g, "xy"));
    }

    @Test
    void utf8IsDecodedAcrossTokensAndBadBytesAreRefused() {
        Grammar g = Grammar.parse("root ::= [\u00e0-\u00ff] [\u4e00-\u9fff] \"!\"");
        GrammarMatcher m = new GrammarMatcher(g);
        byte[] text = "é中!".getBytes(StandardCharsets.UTF_8);
        for (byte b : text) {
            assertTrue(m.accept(new byte[] {b}));
        }
        assertTrue(m.canStop());
        GrammarMatcher p = new GrammarMatcher(g);
        assertFalse(p.accept(new byte[] {(byte) 0xC3, (byte) 0x28}), "a lead byte needs a continuation byte");
        assertFalse(p.accept(new byte[] {(byte) 0xC2}), "U+0080..U+00BF cannot reach [à-ÿ]");
        assertTrue(p.accept(new byte[] {(byte) 0xC3}));
        assertFalse(p.canStop(), "in the middle of a character");
        // overlong encodings of ASCII are not UTF-8
        assertFalse(GrammarMatcher.matches(Grammar.parse("root ::= \"\\\"\""), new String(new byte[] {(byte) 0xE0, (byte) 0x80, (byte) 0xA2}, StandardCharsets.ISO_8859_1)));
        GrammarMatcher q = new GrammarMatcher(Grammar.parse("root ::= [^a]"));
        assertFalse(q.accept(new byte[] {(byte) 0xE0, (byte) 0x80, (byte) 0xA2}));
        assertFalse(q.accept(new byte[] {(byte) 0xFF}));
        // a lead and continuation byte that only an overlong form could finish are refused at once,
        // so a token mask never leads into a character nothing can complete
        GrammarMatcher quote = new GrammarMatcher(Grammar.parse("root ::= [\"a]"));
        assertFalse(quote.accept(new byte[] {(byte) 0xE0, (byte) 0x80}));
        assertFalse(quote.accept(new byte[] {(byte) 0xE0}));
        assertFalse(new GrammarMatcher(Grammar.parse("root ::= [^a]")).accept(new byte[] {(byte) 0xED, (byte) 0xA0}), "surrogates");
        assertTrue(new GrammarMatcher(Grammar.parse("root ::= [^a]")).accept(new byte[] {(byte) 0xED, (byte) 0x9F}));
    }

    @Test
    void writesGbnfThatParsesToTheSameRules() {
        String text = "root ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\npair ::= [a-z]+ \":\" [0-9]{1,3}\nws ::= [ \\t\\n]{0,2}\n";
        Grammar g = Grammar.parse(text);
        Grammar again = Grammar.parse(g.toString());
        assertEquals(g.rules(), again.rules());
        assertTrue(GrammarMatcher.matches(again, "{ ab:1,c:234}"));
    }

    @Test
    void errorsNameTheProblem() {
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= foo\n")).getMessage().contains("'foo'"));
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("start ::= \"a\"\n")).getMessage().contains("root"));
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= \"a\nb\"\n")).getMessage().contains("line 1"));
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= [ab\n")).getMessage().contains("class"));
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= root \"a\" | \"b\"\n")).getMessage().contains("left-recursive"));
        assertTrue(assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= x \"a\"\nx ::= \"\" | root\n")).getMessage().contains("left-recursive"));
        assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= \"a\"{3,2}\n"));
        assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= \"a\"\nroot ::= \"b\"\n"));
        assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= <[100]>\n"));
    }

    @Test
    void rightRecursionAndNullableLoopsTerminate() {
        assertTrue(m("root ::= \"a\" root | \"\"\n", "aaaa"));
        assertTrue(m("root ::= (\"a\" \"b\"?)* \"c\"\n", "aabac"));
        // a repetition of something that can be empty loops without reading (llama.cpp refuses it too)
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Grammar.parse("root ::= (\"a\"?)*\n"));
        assertTrue(e.getMessage().contains("'root'"), e.getMessage());
    }
}
