package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class StopStringMatcherTest {

    @Test
    void holdsBackAPossibleStartAndStopsWhenItCompletesAcrossPieces() {
        StopStringMatcher m = new StopStringMatcher(List.of("</s>"));
        assertEquals("Hello ", m.push("Hello <"));
        assertEquals("", m.push("/"));
        assertEquals("", m.push("s"));
        assertNull(m.matched());
        assertEquals("", m.push("> and more"));
        assertEquals("</s>", m.matched());
        assertThrows(IllegalStateException.class, () -> m.push("x"));
    }

    @Test
    void releasesHeldTextOnceItCannotStartAStopString() {
        StopStringMatcher m = new StopStringMatcher(List.of("</s>"));
        assertEquals("a", m.push("a<"));
        assertEquals("</b", m.push("/b"));
        assertEquals("", m.push("<"));
        assertEquals("<", m.flush());
        assertNull(m.matched());
    }

    @Test
    void textBeforeTheStopStringInTheSamePieceIsEmitted() {
        StopStringMatcher m = new StopStringMatcher(List.of("STOP"));
        assertEquals("abc ", m.push("abc STOP def"));
        assertEquals("STOP", m.matched());
    }

    @Test
    void overlappingStartsKeepOnlyWhatCouldStillMatch() {
        StopStringMatcher m = new StopStringMatcher(List.of("aab"));
        assertEquals("a", m.push("aaa"));
        assertEquals("", m.push("b"));
        assertEquals("aab", m.matched());
    }

    @Test
    void theEarliestOfSeveralStopStringsWins() {
        StopStringMatcher m = new StopStringMatcher(List.of("bcd", "abc", "\n\n"));
        assertEquals("x", m.push("xab"));
        assertEquals("", m.push("cd"));
        assertEquals("abc", m.matched());

        StopStringMatcher n = new StopStringMatcher(List.of("bcd", "abc", "\n\n"));
        assertEquals("line", n.push("line\n"));
        assertEquals("", n.push("\nnext"));
        assertEquals("\n\n", n.matched());
    }

    @Test
    void holdsOnlyTheLongestPossiblePrefixOfAnyStop() {
        StopStringMatcher m = new StopStringMatcher(List.of("<|im_end|>", "Observation:"));
        assertEquals("Answer: 4 ", m.push("Answer: 4 <|im"));
        assertEquals("", m.push("_en"));
        assertEquals("<|im_en", m.flush());
    }
}
