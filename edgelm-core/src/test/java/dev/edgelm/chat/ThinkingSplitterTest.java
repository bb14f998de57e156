package dev.edgelm.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ThinkingSplitterTest {
    /** Collects what a splitter passes on: thinking in [], answer as is. */
    static final class Collect implements ChatListener {
        final StringBuilder all = new StringBuilder();

        @Override
        public void onThinking(String text) {
            all.append('[').append(text).append(']');
        }

        @Override
        public void onAnswer(String text) {
            all.append(text);
        }
    }

    static String split(boolean startsThinking, String... pieces) {
        Collect c = new Collect();
        ThinkingSplitter s = new ThinkingSplitter(startsThinking, c);
        for (String p : pieces) {
            s.push(p);
        }
        s.finish();
        return c.all.toString().replace("][", "");
    }

    @Test
    void aReplyThatOpensItsOwnThinkBlock() {
        assertEquals("[Let me see.]The answer.", split(false, "<think>\nLet me see.\n</think>\n\nThe answer."));
    }

    @Test
    void aPromptThatEndsInsideAThinkBlock() {
        assertEquals("[a\n\nb]c", split(true, "a\n\nb\n</think>\n\nc"));
        assertEquals("[ ownja shop]", split(true, " ownja shop"));
    }

    @Test
    void tagsSplitAcrossPiecesAndCharByChar() {
        String text = "<think>\nx < y, so </thin is not a tag\n</think>\n\nanswer <b>bold</b>\n";
        String expected = "[x < y, so </thin is not a tag]answer <b>bold</b>";
        assertEquals(expected, split(false, text));
        assertEquals(expected, split(false, text.split("")));
        assertEquals(expected, split(false, "<thi", "nk>\nx < y, so </thin is not a tag\n</", "think>\n", "\nanswer <b>bold</b>", "\n"));
    }

    @Test
    void noThinkingAtAll() {
        ThinkingSplitter s = new ThinkingSplitter(false, ChatListener.NONE);
        s.push(" plain <thin");
        s.push("g> text");
        s.finish();
        assertEquals(" plain <thing> text", s.answer());
        assertFalse(s.sawThinking());
        ThinkingSplitter t = new ThinkingSplitter(false, ChatListener.NONE);
        t.push("a <think>b");
        t.finish();
        assertTrue(t.sawThinking());
        assertEquals("b", t.thinking());
        assertEquals("a ", t.answer());
    }
}
