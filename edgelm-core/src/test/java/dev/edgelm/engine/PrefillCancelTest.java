package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.template.ChatFormat;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A cancel during a long prefill takes effect at the next chunk, and leaves a state the next turn can use. */
@Timeout(120)
class PrefillCancelTest {

    @Test
    void aCancelledPrefillStopsAfterTheCurrentChunkAndKeepsAValidPrefix() {
        try (Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withPrefillChunk(4))) {
            int[] prompt = new int[20];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = 10 + i;
            }
            Session s = engine.newSession();
            s.cancel(); // as if Ctrl+C came while the first chunk ran
            Session.Cancelled e = assertThrows(Session.Cancelled.class, () -> s.prefill(prompt));
            assertEquals("cancelled after 4 of 20 prompt tokens", e.getMessage());
            assertArrayEquals(Arrays.copyOf(prompt, 4), s.tokens());
            // the rest fed afterwards gives the logits of feeding it all at once
            float[] resumed = s.prefill(Arrays.copyOfRange(prompt, 4, prompt.length));
            Session fresh = engine.newSession();
            float[] whole = fresh.prefill(prompt);
            assertArrayEquals(whole, resumed, 1e-4f);
        }
    }

    @Test
    void aConversationCancelledDuringItsPromptAnswersTheNextTurnAsAFreshOne() throws Exception {
        ChatFormat format = ChatFormat.load(TinyChat.DIR);
        GenerationOptions options = GenerationOptions.builder().maxNewTokens(8).build();
        String longText = "word ".repeat(400);
        try (Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withPrefillChunk(8))) {
            Conversation c = Conversation.start(engine, format);
            AtomicBoolean done = new AtomicBoolean();
            Thread canceller = Thread.ofVirtual().start(() -> {
                while (!done.get()) {
                    c.cancel();
                    Thread.onSpinWait();
                }
            });
            Reply r;
            try {
                r = c.send(longText, options, ChatListener.NONE);
            } finally {
                done.set(true);
                canceller.join();
            }
            assertEquals(StopReason.CANCELLED, r.reason());
            Reply next = c.send(TinyChat.TURN1, options, ChatListener.NONE);
            Conversation fresh = Conversation.start(engine, format);
            Reply expected = fresh.send(TinyChat.TURN1, options, ChatListener.NONE);
            assertEquals(expected.text(), next.text());
        }
    }
}
