package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A tokenizer.json's own Split regex cannot hang the encoder by backtracking. */
class RegexBudgetTest {
    private static List<String> words(PreTokenizer p, String text) {
        List<String> out = new ArrayList<>();
        p.split(text, (s, e) -> out.add(text.substring(s, e)));
        return out;
    }

    @Test
    void aCatastrophicPatternIsStoppedWithAnError() {
        // ((a+)+)+b on thirty a's and no b: java.util.regex reads 150 million characters for 24 of them
        PreTokenizer evil = PreTokenizer.regex("((a+)+)+b");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> words(evil, "a".repeat(30) + "c"));
        assertTrue(e.getMessage().contains("backtracks without bound"), e.getMessage());
    }

    @Test
    void ordinaryPatternsSplitAsBefore() {
        PreTokenizer gpt2 = PreTokenizer.named("gpt2");
        assertEquals(List.of("Hello", ",", " world", "'s", " 123"), words(gpt2, "Hello, world's 123"));
        String longText = "word ".repeat(20_000);
        assertEquals(20_001, words(gpt2, longText).size()); // the last space is a word of its own
    }
}
