package dev.edgelm.engine.batch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.model.SequenceState;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A 10-turn chat on the tiny-chat fixture, each turn sent as a whole rendered history (what an OpenAI-style
 * client does), against a scheduler without a cache (every turn prefilled from scratch) and against a
 * single-stream session: same replies, and every turn after the first prefills only the tokens past the
 * point where its render parts from the previous turn's prompt and reply.
 */
class PrefixCacheChatTest {
    static final Path TINY_CHAT = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
    static final Map<String, Object> NO_THINKING = Map.of("enable_thinking", false);
    static Engine engine;
    static ChatFormat format;
    static TokenDecoder decoder;

    @BeforeAll
    static void load() {
        engine = Engine.load(TINY_CHAT, EngineOptions.defaults().withThreads(2).withMaxNumTokens(2048).withPrefillChunk(32));
        format = ChatFormat.load(TINY_CHAT);
        decoder = () -> {
            IncrementalDecoder d = format.tokenizer().newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int id) {
                    return format.tokenizer().hasToken(id) ? d.accept(id) : "";
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static int commonPrefix(int[] a, int[] b) {
        int i = 0;
        while (i < Math.min(a.length, b.length) && a[i] == b[i]) {
            i++;
        }
        return i;
    }

    /**
     * Where this render and a render with one more (stand-in) exchange part: the next turn will likely share
     * the tokens up to there (for Qwen3.5's template: right after this turn's {@code <|im_start|>assistant\n},
     * as the next render drops the empty think block). This is what a caller passes as {@code snapshotAt}.
     */
    static int boundary(List<Map<String, Object>> messages, int[] ids) {
        List<Map<String, Object>> probe = new ArrayList<>(messages);
        probe.add(Map.of("role", "assistant", "content", "x"));
        probe.add(Map.of("role", "user", "content", "y"));
        return commonPrefix(format.encodePrompt(probe, null, true, NO_THINKING), ids);
    }

    @Test
    void tenTurnsPrefillOnlyTheirNewTokensWithRepliesIdenticalToColdRuns() {
        GenerationOptions options = GenerationOptions.builder().maxNewTokens(12).stopTokenIds(format.stopTokenIds()).build();
        BatchOptions warmOptions = new BatchOptions(2, 2048, 256L << 20, 32);
        List<Map<String, Object>> messages = new ArrayList<>();
        messages.add(Map.of("role", "system", "content", "You are a helpful assistant."));
        String[] questions = {"What is the capital of France?", "And of Germany?", "Name a river there.",
                "How long is it?", "Which seas does it reach?", "Tell me a joke.", "Another one, please.",
                "What is 2 + 2?", "Say goodbye.", "Thanks!"};
        try (BatchScheduler warm = new BatchScheduler(engine, warmOptions);
             BatchScheduler cold = new BatchScheduler(engine, new BatchOptions(2, 2048, 0, 32))) {
            int[] previous = null; // last turn's prompt followed by its reply
            for (int turn = 0; turn < questions.length; turn++) {
                messages.add(Map.of("role", "user", "content", questions[turn]));
                int[] prompt = format.encodePrompt(messages, null, true, NO_THINKING);
                int[] snapshotAt = {boundary(messages, prompt)};
                Generation w = warm.submit(new GenerationRequest(prompt, options, decoder, null, snapshotAt));
                Generation c = cold.submit(new GenerationRequest(prompt, options, decoder, null, snapshotAt));
                GenerationResult rw = w.join();
                GenerationResult rc = c.join();
                assertArrayEquals(rc.tokens(), rw.tokens(), "turn " + (turn + 1) + ": reply as from scratch");
                assertEquals(rc.text(), rw.text());
                Session s = engine.newSession();
                s.prefill(prompt);
                assertArrayEquals(s.generate(options, decoder, GenerationListener.NONE).tokens(), rw.tokens(),
                        "turn " + (turn + 1) + ": reply as a session's");
                assertEquals(0, c.cachedTokens());
                assertEquals(prompt.length, c.prefilledTokens());
                if (turn == 0) {
                    assertEquals(0, w.cachedTokens());
                } else {
                    int shared = commonPrefix(prompt, previous);
                    assertTrue(shared > 0 && shared < prompt.length);
                    assertEquals(shared, w.cachedTokens(), "turn " + (turn + 1) + ": the shared prefix comes from the cache");
                    assertEquals(prompt.length - shared, w.prefilledTokens(), "turn " + (turn + 1) + ": only the new tokens");
                }
                previous = new int[prompt.length + rw.tokens().length];
                System.arraycopy(prompt, 0, previous, 0, prompt.length);
                System.arraycopy(rw.tokens(), 0, previous, prompt.length, rw.tokens().length);
                messages.add(Map.of("role", "assistant", "content", rw.text()));
            }
            BatchStats st = warm.stats();
            assertEquals(9, st.cacheHits());
            assertTrue(st.cacheBytes() <= warmOptions.cacheRamBytes());
            assertTrue(st.cacheEntries() > 0);
        }
    }

    @Test
    void theLruStaysWithinItsBytesAndEvictsTheOldestFirst() {
        SequenceState state = engine.model().newState(64);
        int[] tokens = new int[40];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = 10 + i;
        }
        engine.model().forward(state, tokens, 0, 10, dev.edgelm.model.Qwen35Model.Logits.NONE);
        SequenceState.Checkpoint at10 = state.snapshot();
        long one = at10.bytes() + 4L * 10;
        // the bytes are the conv windows, the recurrent states and 10 positions of the KV cache
        var c = engine.config();
        long expected = 0;
        for (int l = 0; l < c.numLayers(); l++) {
            expected += c.fullAttention()[l]
                    ? 2L * 10 * c.numKvHeads() * c.headDim() * 4
                    : (long) (c.convKernel() - 1) * c.convDim() * 4 + (long) c.linearValueHeads() * c.linearKeyDim() * (c.linearValueDim() + 16) * 4;
        }
        assertEquals(expected, at10.bytes());
        PrefixCache cache = new PrefixCache(2 * one + one / 2);
        cache.put(tokens, 10, at10);
        int[] other = tokens.clone();
        other[0] = 99;
        cache.put(other, 10, at10);
        assertEquals(10, cache.longestPrefix(tokens, 39).length()); // touches the first
        int[] third = tokens.clone();
        third[0] = 98;
        cache.put(third, 10, at10); // evicts "other", the least recently used
        assertEquals(2, cache.size());
        assertTrue(cache.bytes() <= 2 * one + one / 2);
        assertEquals(null, cache.longestPrefix(other, 39));
        assertEquals(10, cache.longestPrefix(third, 39).length());
        assertEquals(null, cache.longestPrefix(tokens, 9), "a snapshot past the allowed length is not used");
        // restoring reproduces the state: the same logits as continuing the original
        SequenceState restored = engine.model().newState(64);
        restored.restore(at10);
        float[] a = engine.model().forward(state, tokens, 10, 5, dev.edgelm.model.Qwen35Model.Logits.LAST);
        float[] b = engine.model().forward(restored, tokens, 10, 5, dev.edgelm.model.Qwen35Model.Logits.LAST);
        assertArrayEquals(a, b);
    }
}
