package dev.edgelm.grammar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The trie-walked token mask against the brute-force definition (a fresh matcher fed the text so far plus
 * each token's bytes, one token at a time), on the tiny-chat tokenizer's byte-level vocabulary.
 */
class GrammarConstraintTest {
    private static Tokenizer tokenizer;
    private static Vocabulary vocab;

    @BeforeAll
    static void load() {
        tokenizer = ChatFormat.load(Path.of("src/test/resources/fixtures/qwen35/tiny-chat")).tokenizer();
        vocab = Vocabulary.of(tokenizer, tokenizer.vocabSize());
    }

    private static boolean[] bruteForce(Grammar g, byte[] prefix) {
        boolean[] ok = new boolean[tokenizer.vocabSize()];
        for (int id = 0; id < ok.length; id++) {
            if (!tokenizer.hasToken(id) || tokenizer.isSpecial(id)) {
                continue;
            }
            byte[] b = tokenizer.bytes(id);
            if (b.length == 0) {
                continue;
            }
            GrammarMatcher m = new GrammarMatcher(g);
            ok[id] = m.accept(prefix) && m.accept(b);
        }
        return ok;
    }

    private static boolean[] masked(GrammarConstraint c) {
        float[] logits = new float[tokenizer.vocabSize() + 5];
        c.mask(logits);
        boolean[] ok = new boolean[tokenizer.vocabSize()];
        for (int id = 0; id < ok.length; id++) {
            ok[id] = logits[id] == 0f;
        }
        for (int id = ok.length; id < logits.length; id++) {
            assertEquals(Float.NEGATIVE_INFINITY, logits[id], "ids past the vocabulary are never allowed");
        }
        return ok;
    }

    @Test
    void maskEqualsTheBruteForceDefinitionAtEveryStep() {
        String schema = """
                {"type":"object","properties":{"name":{"type":"string","maxLength":12},
                 "tags":{"type":"array","items":{"enum":["a","bé",3]},"maxItems":3},"n":{"type":"number"}},
                 "required":["name"]}""";
        Grammar g = JsonSchemaGrammar.fromSchema(schema);
        String text = "{\"name\": \"Zoë 中文\", \"tags\":[\"bé\",3], \"n\":-1.5e3}";
        int[] ids = tokenizer.encode(text);
        GrammarConstraint c = new GrammarConstraint(g, vocab);
        ByteArrayOutputStream prefix = new ByteArrayOutputStream();
        int allowedSomewhere = 0;
        for (int id : ids) {
            boolean[] expected = bruteForce(g, prefix.toByteArray());
            assertArrayEquals(expected, masked(c), "after " + prefix.toString(StandardCharsets.UTF_8));
            assertTrue(expected[id], "the text's own token is allowed");
            for (boolean b : expected) {
                allowedSomewhere += b ? 1 : 0;
            }
            assertFalse(c.canStop());
            c.accept(id);
            prefix.writeBytes(tokenizer.bytes(id));
        }
        assertTrue(c.canStop());
        assertTrue(allowedSomewhere > ids.length, "the masks are not trivially one token");
        boolean[] after = masked(c);
        for (boolean b : after) {
            assertFalse(b, "nothing may follow the closed object");
        }
    }

    @Test
    void specialTokensAreNeverAllowedAndABadTokenIsRefused() {
        GrammarConstraint c = new GrammarConstraint(JsonSchemaGrammar.anyValue(), vocab);
        boolean[] ok = masked(c);
        int special = 0;
        for (int id = 0; id < tokenizer.vocabSize(); id++) {
            if (tokenizer.isSpecial(id)) {
                assertFalse(ok[id]);
                special++;
            }
        }
        assertTrue(special > 0);
        int x = tokenizer.encode("x")[0];
        assertFalse(ok[x]);
        assertThrows(EdgeLmException.class, () -> c.accept(x));
        int brace = tokenizer.encode("{")[0];
        assertTrue(c.allows(brace));
        c.accept(brace);
        assertFalse(c.canStop());
    }
}
