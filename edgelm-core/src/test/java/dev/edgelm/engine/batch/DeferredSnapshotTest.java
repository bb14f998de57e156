package dev.edgelm.engine.batch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.util.EdgeLmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link GenerationRequest#snapshotLater()}: the snapshot where the next turn of a chat parts from this one is
 * taken after the request instead of cutting its prefill there. Each turn of a chat on the tiny-chat fixture is
 * then prefilled in one chunk, the next turn still takes exactly the shared prefix from the cache (whether it
 * arrives at once, so the snapshot is taken just before it is admitted, or after the scheduler had idle time to
 * take it), and every reply is the reply of a scheduler without a cache.
 */
class DeferredSnapshotTest {
    static Engine engine;
    static ChatFormat format;
    static TokenDecoder decoder;
    static GenerationOptions options;

    @BeforeAll
    static void load() {
        engine = Engine.load(PrefixCacheChatTest.TINY_CHAT, EngineOptions.defaults().withThreads(2).withMaxNumTokens(2048));
        format = ChatFormat.load(PrefixCacheChatTest.TINY_CHAT);
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
        options = GenerationOptions.builder().maxNewTokens(10).stopTokenIds(format.stopTokenIds()).build();
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    /** Where this render parts from a render with one more (stand-in) exchange: where the next turn parts from it. */
    static int boundary(List<Map<String, Object>> messages, int[] ids) {
        List<Map<String, Object>> probe = new ArrayList<>(messages);
        probe.add(Map.of("role", "assistant", "content", "x"));
        probe.add(Map.of("role", "user", "content", "y"));
        return PrefixCacheChatTest.commonPrefix(format.encodePrompt(probe, null, true, PrefixCacheChatTest.NO_THINKING), ids);
    }

    @Test
    void chatTurnsArrivingAtOnceTakeTheSharedPrefixFromASnapshotTakenBeforeTheirAdmission() throws InterruptedException {
        chat(false);
    }

    @Test
    void chatTurnsArrivingLaterFindTheSnapshotTakenWhileTheSchedulerWasIdle() throws InterruptedException {
        chat(true);
    }

    private void chat(boolean waitForIdleSnapshots) throws InterruptedException {
        List<Map<String, Object>> messages = new ArrayList<>();
        String[] questions = {"What is the capital of France?", "And of Germany?", "Name a river there.",
                "Tell me a joke.", "Say goodbye."};
        // chunks of 512: one chunk per turn unless a cut splits it
        try (BatchScheduler warm = new BatchScheduler(engine, new BatchOptions(2, 2048, 256L << 20, 512));
             BatchScheduler cold = new BatchScheduler(engine, new BatchOptions(2, 2048, 0, 512))) {
            int[] previous = null;
            for (int turn = 0; turn < questions.length; turn++) {
                messages.add(Map.of("role", "user", "content", questions[turn]));
                int[] prompt = format.encodePrompt(messages, null, true, PrefixCacheChatTest.NO_THINKING);
                int later = boundary(messages, prompt);
                assertTrue(later > 0 && later < prompt.length);
                // the previous turns' parting points are cuts, as a caller passes them, so a cold prompt is cut there too
                int[] cuts = previous == null ? null : new int[] {PrefixCacheChatTest.commonPrefix(prompt, previous)};
                Generation w = warm.submit(new GenerationRequest(prompt, options, decoder, null, cuts,
                        new int[] {later}));
                Generation c = cold.submit(new GenerationRequest(prompt, options, decoder, null, cuts,
                        new int[] {later}));
                GenerationResult rw = w.join();
                GenerationResult rc = c.join();
                assertArrayEquals(rc.tokens(), rw.tokens(), "turn " + (turn + 1) + ": reply as from scratch");
                assertEquals(1, w.prefillChunks(), "turn " + (turn + 1) + ": the new tokens in one chunk");
                if (turn > 0) {
                    int shared = PrefixCacheChatTest.commonPrefix(prompt, previous);
                    assertEquals(shared, w.cachedTokens(), "turn " + (turn + 1) + ": the shared prefix comes from the cache");
                    assertEquals(prompt.length - shared, w.prefilledTokens(), "turn " + (turn + 1) + ": only the new tokens");
                }
                if (waitForIdleSnapshots) {
                    long expected = turn + 1;
                    // woken by the snapshot itself; the bound only keeps a broken scheduler from hanging the build
                    assertTrue(warm.awaitDeferredSnapshots(expected, Duration.ofMinutes(5)), "the idle scheduler took the snapshot");
                    assertEquals(expected, warm.deferredSnapshots(), "exactly one snapshot per turn");
                }
                previous = new int[prompt.length + rw.tokens().length];
                System.arraycopy(prompt, 0, previous, 0, prompt.length);
                System.arraycopy(rw.tokens(), 0, previous, prompt.length, rw.tokens().length);
                messages.add(Map.of("role", "assistant", "content", rw.text()));
            }
            assertEquals(0, cold.deferredSnapshots(), "without a cache nothing is kept");
            assertEquals(questions.length - 1, warm.stats().cacheHits());
        }
    }

    /**
     * Turns admitted while another sequence decodes: nothing is deferred (a busy scheduler may never be idle, and
     * prefilling a deferred snapshot at admission would stall the running sequence), the parting point is a cut
     * of the turn's own prefill and snapshotted there, so every next turn still prefills only its new tokens.
     */
    @Test
    void turnsAdmittedWhileAnotherSequenceRunsSnapshotInline() {
        List<Map<String, Object>> messages = new ArrayList<>();
        String[] questions = {"What is the capital of France?", "And of Germany?", "Name a river there.", "Say goodbye."};
        GenerationOptions endless = GenerationOptions.builder().maxNewTokens(1900).build(); // no stop token
        try (BatchScheduler warm = new BatchScheduler(engine, new BatchOptions(2, 2048, 256L << 20, 512));
             BatchScheduler cold = new BatchScheduler(engine, new BatchOptions(2, 2048, 0, 512))) {
            Generation background = warm.submit(new GenerationRequest(new int[] {1, 2, 3, 4}, endless, decoder, null));
            int[] previous = null;
            for (int turn = 0; turn < questions.length; turn++) {
                messages.add(Map.of("role", "user", "content", questions[turn]));
                int[] prompt = format.encodePrompt(messages, null, true, PrefixCacheChatTest.NO_THINKING);
                int later = boundary(messages, prompt);
                int[] cuts = previous == null ? null : new int[] {PrefixCacheChatTest.commonPrefix(prompt, previous)};
                Generation w = warm.submit(new GenerationRequest(prompt, options, decoder, null, cuts, new int[] {later}));
                GenerationResult rw = w.join();
                GenerationResult rc = cold.submit(new GenerationRequest(prompt, options, decoder, null, cuts,
                        new int[] {later})).join();
                assertFalse(background.isDone(), "the other sequence still runs: this is the busy path");
                assertArrayEquals(rc.tokens(), rw.tokens(), "turn " + (turn + 1) + ": reply as from scratch");
                if (turn > 0) {
                    int shared = PrefixCacheChatTest.commonPrefix(prompt, previous);
                    assertEquals(shared, w.cachedTokens(), "turn " + (turn + 1) + ": the shared prefix comes from the cache");
                    assertEquals(prompt.length - shared, w.prefilledTokens(), "turn " + (turn + 1) + ": only the new tokens");
                }
                previous = new int[prompt.length + rw.tokens().length];
                System.arraycopy(prompt, 0, previous, 0, prompt.length);
                System.arraycopy(rw.tokens(), 0, previous, prompt.length, rw.tokens().length);
                messages.add(Map.of("role", "assistant", "content", rw.text()));
            }
            assertEquals(0, warm.deferredSnapshotTokens(), "nothing prefilled again for a deferred snapshot");
            background.cancel();
            background.join();
        }
    }

    @Test
    void offsetsOutsideThePromptAreRefused() {
        try (BatchScheduler s = new BatchScheduler(engine, new BatchOptions(1, 64, 1L << 20, 32))) {
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(new int[] {1, 2, 3},
                    options, null, null, null, new int[] {4})));
            assertTrue(e.getMessage().contains("snapshotLater offset 4"), e.getMessage());
        }
    }
}
