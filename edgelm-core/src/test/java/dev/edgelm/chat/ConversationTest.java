package dev.edgelm.chat;

import static dev.edgelm.chat.TinyChat.ids;
import static dev.edgelm.chat.TinyChat.replyIds;
import static dev.edgelm.chat.TinyChat.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Conversations on tiny-chat against the fixture's goldens and against from-scratch generation. */
class ConversationTest {
    static Engine engine;
    static ChatFormat format;

    static final GenerationOptions CHAT = GenerationOptions.builder().maxNewTokens(24).build();

    @BeforeAll
    static void load() {
        engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1));
        format = ChatFormat.load(TinyChat.DIR);
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static Conversation chat() {
        Conversation c = Conversation.start(engine, format);
        c.setSystem(TinyChat.SYSTEM);
        return c;
    }

    /** What a fresh session generates for the render of {@code messages} (greedy): the reference for any turn. */
    static int[] fromScratch(List<Map<String, Object>> messages, boolean thinking, int maxNewTokens) {
        int[] prompt = format.encodePrompt(messages, null, true, Map.of("enable_thinking", thinking));
        Session s = engine.newSession();
        s.prefill(prompt);
        GenerationResult r = s.generate(GenerationOptions.builder().maxNewTokens(maxNewTokens)
                .stopTokenIds(format.stopTokenIds()).build());
        return r.tokens();
    }

    static List<Map<String, Object>> plus(List<Map<String, Object>> history, String user) {
        List<Map<String, Object>> all = new ArrayList<>(history);
        all.add(Map.of("role", "user", "content", user));
        return all;
    }

    static int commonPrefix(int[] a, int[] b) {
        int i = 0;
        while (i < Math.min(a.length, b.length) && a[i] == b[i]) {
            i++;
        }
        return i;
    }

    @Test
    void turnOneAndTurnTwoReproduceTheGoldensWithOnlyTheDeltaPrefilled() {
        Conversation c = chat();
        StringBuilder streamed = new StringBuilder();
        Reply one = c.send(TinyChat.TURN1, CHAT, new ChatListener() {
            @Override
            public void onAnswer(String text) {
                streamed.append(text);
            }
        });
        assertEquals(text("turn1_reply"), one.text());
        assertEquals(text("turn1_reply"), one.answer());
        assertEquals("", one.thinking());
        assertEquals(text("turn1_reply").strip(), streamed.toString().strip(), "streamed answer (outer newlines dropped)");
        assertArrayEquals(replyIds("turn1"), one.tokens());
        assertEquals(StopReason.STOP_TOKEN, one.reason(), "stops on <|im_end|>");
        assertEquals(42, one.promptTokens());
        assertEquals(42, one.prefilledTokens());
        assertFalse(one.rolledBack());
        assertArrayEquals(ids("turn1_prompt_ids"), Arrays.copyOf(c.session().tokens(), 42));

        long before = c.session().tokensPrefilled();
        Reply two = c.send(TinyChat.TURN2, CHAT, ChatListener.NONE);
        assertEquals(text("turn2_reply"), two.text());
        assertArrayEquals(replyIds("turn2"), two.tokens());
        assertEquals(StopReason.MAX_TOKENS, two.reason());
        assertEquals(68, two.promptTokens());
        assertTrue(two.rolledBack(), "the template re-renders turn 1 differently: back to a snapshot");
        assertEquals(TinyChat.SHARED_TURN1_TURN2, two.reusedTokens());
        assertEquals(68 - 38, two.prefilledTokens());
        assertEquals(30, c.session().tokensPrefilled() - before, "the session's own counter agrees");
        assertArrayEquals(ids("turn2_prompt_ids"), Arrays.copyOf(c.session().tokens(), 68));

        List<Map<String, Object>> history = c.messages();
        assertEquals(5, history.size());
        assertEquals(Map.of("role", "assistant", "content", text("turn1_reply")), history.get(2));
    }

    @Test
    void thinkingPromptReproducesTheGoldenAsThinkingText() {
        Conversation c = Conversation.start(engine, format);
        c.setThinking(true);
        StringBuilder thinking = new StringBuilder();
        StringBuilder answer = new StringBuilder();
        Reply r = c.send(TinyChat.THINK, GenerationOptions.builder().maxNewTokens(16).build(), new ChatListener() {
            @Override
            public void onThinking(String text) {
                thinking.append(text);
            }

            @Override
            public void onAnswer(String text) {
                answer.append(text);
            }
        });
        assertArrayEquals(ids("think_prompt_ids"), Arrays.copyOf(c.session().tokens(), 14));
        assertEquals(text("think_reply"), r.text());
        assertArrayEquals(replyIds("think"), r.tokens());
        assertEquals(StopReason.STOP_TOKEN, r.reason());
        // the prompt ends inside <think>, and the reply never closes it: all of it is thinking
        assertEquals(text("think_reply"), thinking.toString());
        assertEquals(text("think_reply"), r.thinking());
        assertEquals("", answer.toString());
        assertEquals(Map.of("role", "assistant", "reasoning_content", text("think_reply"), "content", ""), c.messages().get(1));
    }

    /** Several turns, each equal to the render of the whole conversation generated from scratch. */
    void turnByTurnEqualsFromScratch(boolean thinking) {
        Conversation c = chat();
        c.setThinking(thinking);
        List<String> users = List.of(TinyChat.TURN1, TinyChat.TURN2, "Thanks. What about Italy?", "Bye!");
        int[] previousPrompt = null;
        for (int turn = 0; turn < users.size(); turn++) {
            List<Map<String, Object>> messages = plus(c.messages(), users.get(turn));
            int[] expected = fromScratch(messages, thinking, 12);
            int[] prompt = format.encodePrompt(messages, null, true, Map.of("enable_thinking", thinking));
            long before = c.session().tokensPrefilled();
            Reply r = c.send(users.get(turn), GenerationOptions.builder().maxNewTokens(12).build(), ChatListener.NONE);
            assertArrayEquals(expected, r.tokens(), "turn " + (turn + 1));
            assertEquals(prompt.length, r.promptTokens());
            assertEquals(r.promptTokens() - r.reusedTokens(), r.prefilledTokens());
            assertEquals(r.prefilledTokens(), c.session().tokensPrefilled() - before, "turn " + (turn + 1));
            if (previousPrompt != null) {
                // the stock template re-renders the last reply trimmed and without its think block: the state goes
                // back to the end of the previous prompt's "<|im_start|>assistant\n", all that the two renders share
                assertTrue(r.rolledBack(), "turn " + (turn + 1));
                assertEquals(commonPrefix(previousPrompt, prompt), r.reusedTokens(), "turn " + (turn + 1));
                assertTrue(r.prefilledTokens() < prompt.length / 2, "only the delta, turn " + (turn + 1));
            }
            previousPrompt = prompt;
        }
    }

    @Test
    void multiTurnGreedyEqualsFromScratch() {
        turnByTurnEqualsFromScratch(false);
    }

    @Test
    void multiTurnWithThinkingStrippedFromHistoryEqualsFromScratch() {
        turnByTurnEqualsFromScratch(true);
    }

    @Test
    void aTurnThatDoesNotFitFailsClearlyAndTheConversationGoesOn() {
        try (Engine small = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withMaxNumTokens(80))) {
            Conversation c = Conversation.start(small, format);
            c.setSystem(TinyChat.SYSTEM);
            c.send(TinyChat.TURN1, CHAT, ChatListener.NONE);
            List<Map<String, Object>> before = c.messages();
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> c.send(TinyChat.TURN2, CHAT, ChatListener.NONE));
            assertTrue(e.getMessage().contains("needs 92 tokens") && e.getMessage().contains("holds 80"), e.getMessage());
            assertEquals(before, c.messages(), "the failed user message is not kept");
            // 68 + 12 fits: the golden turn 2, cut at 12 tokens
            Reply r = c.send(TinyChat.TURN2, GenerationOptions.builder().maxNewTokens(12).build(), ChatListener.NONE);
            assertArrayEquals(Arrays.copyOf(replyIds("turn2"), 12), r.tokens());
            assertEquals(30, r.prefilledTokens());
        }
    }

    @Test
    void aCancelledReplyIsKeptAsFarAsItGotAndTheNextTurnIsCorrect() {
        Conversation c = chat();
        Reply cut = c.send(TinyChat.TURN1, CHAT, new ChatListener() {
            int n;

            @Override
            public void onToken(int id) {
                if (++n == 3) {
                    c.cancel();
                }
            }
        });
        assertEquals(StopReason.CANCELLED, cut.reason());
        assertArrayEquals(Arrays.copyOf(replyIds("turn1"), 3), cut.tokens());
        assertEquals(format.tokenizer().decode(cut.tokens(), true), c.messages().get(2).get("content"));
        int[] expected = fromScratch(plus(c.messages(), TinyChat.TURN2), false, 24);
        Reply next = c.send(TinyChat.TURN2, CHAT, ChatListener.NONE);
        assertArrayEquals(expected, next.tokens());
        assertTrue(next.prefilledTokens() < next.promptTokens());
    }

    @Test
    void sampledPaddingIdsHaveNoTextAndDoNotBreakTheTurn() {
        // README: embedding rows 8218..8319 have no token; near-uniform sampling picks some of them
        Conversation c = chat();
        Reply r = c.send(TinyChat.TURN1, GenerationOptions.builder().maxNewTokens(300).temperature(10f).seed(1).build(),
                ChatListener.NONE);
        int[] real = Arrays.stream(r.tokens()).filter(id -> id < 8218).toArray();
        assertTrue(real.length < r.tokens().length, "some padding id was sampled");
        assertEquals(format.tokenizer().decode(real, true), r.text());
        Reply next = c.send(TinyChat.TURN2, CHAT, ChatListener.NONE);
        assertArrayEquals(fromScratch(plus(c.messages().subList(0, 3), TinyChat.TURN2), false, 24), next.tokens());
    }

    @Test
    void aForkContinuesIndependentlyAndResetStartsOver() {
        Conversation c = chat();
        c.send(TinyChat.TURN1, CHAT, ChatListener.NONE);
        Conversation fork = c.fork();
        Reply other = fork.send("Something else entirely?", CHAT, ChatListener.NONE);
        assertEquals(5, fork.messages().size());
        assertEquals(3, c.messages().size(), "the original does not see the fork's turn");
        Reply two = c.send(TinyChat.TURN2, CHAT, ChatListener.NONE);
        assertArrayEquals(replyIds("turn2"), two.tokens());
        assertFalse(Arrays.equals(other.tokens(), two.tokens()));

        c.reset();
        assertEquals(List.of(Map.of("role", "system", "content", TinyChat.SYSTEM)), c.messages());
        Reply again = c.send(TinyChat.TURN1, CHAT, ChatListener.NONE);
        assertArrayEquals(replyIds("turn1"), again.tokens());
        assertEquals(42, again.prefilledTokens());
    }
}
