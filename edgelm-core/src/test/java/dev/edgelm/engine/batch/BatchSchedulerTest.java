package dev.edgelm.engine.batch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.util.EdgeLmException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The scheduler against single-stream {@link Session} runs of the same prompts and options (the reference:
 * sessions are checked against the PyTorch goldens elsewhere): tokens, text, stop reasons; plus
 * queueing, interleaved prefill, cancellation and input errors.
 */
class BatchSchedulerTest {
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    static final int CHUNK = 16;
    static final int CONTEXT = 256;
    static Engine engine;
    /** tiny-a has no tokenizer: a decoder that writes each id as a letter a..z (so stop strings have text). */
    static final TokenDecoder LETTERS = TokenDecoder.ofBytes(id -> new byte[] {(byte) ('a' + id % 26)});

    @BeforeAll
    static void load() {
        engine = Engine.load(TINY_A, EngineOptions.defaults().withThreads(2).withMaxNumTokens(CONTEXT).withPrefillChunk(CHUNK));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static BatchScheduler scheduler(int parallel) {
        return new BatchScheduler(engine, new BatchOptions(parallel, CONTEXT, 0, CHUNK));
    }

    static int[] prompt(long seed, int length) {
        return new SplittableRandom(seed).ints(length, 0, engine.config().vocabSize()).toArray();
    }

    static GenerationResult alone(int[] prompt, GenerationOptions options, TokenDecoder decoder) {
        Session s = engine.newSession();
        s.prefill(prompt);
        return s.generate(options, decoder, GenerationListener.NONE);
    }

    static void assertSameResult(GenerationResult expected, GenerationResult actual, String what) {
        assertArrayEquals(expected.tokens(), actual.tokens(), what + ": tokens");
        assertEquals(expected.text(), actual.text(), what + ": text");
        assertEquals(expected.reason(), actual.reason(), what + ": reason");
        assertEquals(expected.stopToken(), actual.stopToken(), what + ": stop token");
        assertEquals(expected.stopString(), actual.stopString(), what + ": stop string");
    }

    @Test
    void greedyAndSeededSamplingMatchSessionsWithMoreRequestsThanSlots() {
        List<int[]> prompts = new ArrayList<>();
        List<GenerationOptions> options = new ArrayList<>();
        int stopsAt = -1;
        for (int i = 0; i < 7; i++) {
            prompts.add(prompt(i, 1 + 11 * i)); // 1 .. 67 tokens: one to five chunks
            GenerationOptions.Builder b = GenerationOptions.builder().maxNewTokens(12 + i);
            if (i % 3 == 1) {
                b.temperature(0.9f).topK(40).topP(0.95f).seed(100 + i);
            }
            if (i % 3 == 2) {
                int[] free = alone(prompts.get(i), GenerationOptions.builder().repetitionPenalty(1.3f).maxNewTokens(6).build(), null).tokens();
                b.repetitionPenalty(1.3f).stopTokenIds(free[4]);
                if (i == 2) {
                    stopsAt = java.util.stream.IntStream.range(0, 5).filter(k -> free[k] == free[4]).findFirst().getAsInt();
                }
            }
            options.add(b.build());
        }
        try (BatchScheduler s = scheduler(3)) {
            List<Generation> gens = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                gens.add(s.submit(new GenerationRequest(prompts.get(i), options.get(i), LETTERS, null)));
            }
            for (int i = 0; i < prompts.size(); i++) {
                GenerationResult r = gens.get(i).join();
                assertSameResult(alone(prompts.get(i), options.get(i), LETTERS), r, "request " + i);
                assertEquals(prompts.get(i).length, gens.get(i).promptTokens());
                assertEquals(0, gens.get(i).cachedTokens());
                assertEquals(prompts.get(i).length, gens.get(i).prefilledTokens());
            }
            assertEquals(StopReason.STOP_TOKEN, gens.get(2).join().reason());
            assertEquals(stopsAt, gens.get(2).join().tokens().length);
            // FIFO: admitted in the order submitted
            for (int i = 1; i < gens.size(); i++) {
                assertTrue(gens.get(i - 1).admittedAtNanos() <= gens.get(i).admittedAtNanos(), "request " + i);
            }
            BatchStats st = s.stats();
            assertEquals(0, st.activeSequences());
            assertEquals(0, st.queued());
            assertEquals(7, st.requests());
            long generated = gens.stream().mapToLong(g -> g.join().tokens().length).sum();
            assertEquals(generated, st.decodeTokens());
            assertEquals(prompts.stream().mapToLong(p -> p.length).sum(), st.prefillTokens());
            assertTrue(st.decodeSteps() < generated, "several sequences per decode step");
        }
    }

    @Test
    void stopStringsAndTheContextLimitBehaveAsInASession() {
        int[] p = prompt(9, 20);
        String greedyText = alone(p, GenerationOptions.builder().maxNewTokens(20).build(), LETTERS).text();
        String stop = greedyText.substring(5, 7);
        GenerationOptions withStop = GenerationOptions.builder().maxNewTokens(20).stopStrings(stop, "zzzz").build();
        GenerationOptions noLimit = GenerationOptions.builder().build(); // runs to the end of the context
        try (BatchScheduler s = scheduler(2)) {
            Generation a = s.submit(new GenerationRequest(p, withStop, LETTERS, null));
            Generation b = s.submit(new GenerationRequest(prompt(10, CONTEXT - 5), noLimit, LETTERS, null));
            GenerationResult ra = a.join();
            assertEquals(StopReason.STOP_STRING, ra.reason());
            assertSameResult(alone(p, withStop, LETTERS), ra, "stop string");
            GenerationResult rb = b.join();
            assertEquals(StopReason.CONTEXT_FULL, rb.reason());
            assertSameResult(alone(prompt(10, CONTEXT - 5), noLimit, LETTERS), rb, "context");
        }
    }

    @Test
    void aNewPromptIsPrefilledInChunksBetweenDecodeSteps() throws Exception {
        try (BatchScheduler s = scheduler(2)) {
            List<Integer> seenByA = new ArrayList<>();
            java.util.concurrent.CompletableFuture<Generation> b = new java.util.concurrent.CompletableFuture<>();
            GenerationListener watch = new GenerationListener() {
                @Override
                public void onToken(int id) {
                    // A's first token waits until B is submitted, so B's prefill overlaps A's decoding.
                    seenByA.add(b.orTimeout(30, java.util.concurrent.TimeUnit.SECONDS).join().prefilledTokens());
                }
            };
            int[] pa = prompt(1, 4);
            int[] pb = prompt(2, 5 * CHUNK);
            GenerationOptions many = GenerationOptions.builder().maxNewTokens(60).build();
            GenerationOptions few = GenerationOptions.builder().maxNewTokens(3).build();
            Generation a = s.submit(new GenerationRequest(pa, many, null, watch));
            b.complete(s.submit(new GenerationRequest(pb, few, null, null)));
            assertSameResult(alone(pa, many, null), a.join(), "a");
            assertSameResult(alone(pb, few, null), b.get().join(), "b");
            // A kept decoding while B's prompt went in one chunk per step: A saw every chunk boundary.
            for (int done = CHUNK; done <= 5 * CHUNK; done += CHUNK) {
                assertTrue(seenByA.contains(done), "a token of A between B's chunks, after " + done + ": " + seenByA);
            }
        }
    }

    @Test
    void cancellationEndsARunningOrQueuedGenerationWithinAStep() {
        try (BatchScheduler s = scheduler(1)) {
            java.util.concurrent.CompletableFuture<Generation> self = new java.util.concurrent.CompletableFuture<>();
            List<Integer> tokens = new ArrayList<>();
            GenerationListener cancelAtThree = new GenerationListener() {
                @Override
                public void onToken(int id) {
                    tokens.add(id);
                    if (tokens.size() == 3) {
                        self.orTimeout(30, java.util.concurrent.TimeUnit.SECONDS).join().cancel();
                    }
                }
            };
            GenerationRequest r = new GenerationRequest(prompt(3, 10), GenerationOptions.builder().maxNewTokens(50).build(),
                    null, cancelAtThree);
            Generation running = s.submit(r);
            self.complete(running);
            // one slot: this one waits in the queue behind the first
            Generation queued = s.submit(new GenerationRequest(prompt(4, 10), GenerationOptions.builder().maxNewTokens(50).build(), null, null));
            queued.cancel();
            GenerationResult first = running.join();
            assertEquals(StopReason.CANCELLED, first.reason());
            assertEquals(3, first.tokens().length);
            assertArrayEquals(alone(prompt(3, 10), GenerationOptions.builder().maxNewTokens(3).build(), null).tokens(), first.tokens());
            GenerationResult second = queued.join();
            assertEquals(StopReason.CANCELLED, second.reason());
            assertEquals(0, second.tokens().length);
            assertEquals(0, s.stats().activeSequences());
        }
    }

    @Test
    void aListenerThatThrowsEndsOnlyItsOwnGeneration() {
        try (BatchScheduler s = scheduler(2)) {
            IllegalStateException boom = new IllegalStateException("client went away");
            Generation bad = s.submit(new GenerationRequest(prompt(5, 8), GenerationOptions.builder().maxNewTokens(20).build(), null,
                    new GenerationListener() {
                        @Override
                        public void onToken(int id) {
                            throw boom;
                        }
                    }));
            Generation good = s.submit(new GenerationRequest(prompt(6, 8), GenerationOptions.builder().maxNewTokens(20).build(), null, null));
            assertSame(boom, assertThrows(IllegalStateException.class, bad::join));
            assertSameResult(alone(prompt(6, 8), GenerationOptions.builder().maxNewTokens(20).build(), null), good.join(), "good");
        }
    }

    @Test
    void badRequestsFailAtSubmitNamingTheProblem() {
        try (BatchScheduler s = scheduler(1)) {
            GenerationOptions o = GenerationOptions.builder().maxNewTokens(4).build();
            assertTrue(assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(new int[0], o, null, null)))
                    .getMessage().contains("empty"));
            assertTrue(assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(new int[] {1, 99999}, o, null, null)))
                    .getMessage().contains("99999"));
            assertTrue(assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(prompt(1, CONTEXT + 1), o, null, null)))
                    .getMessage().contains(CONTEXT + 1 + " tokens"));
            assertTrue(assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(prompt(1, CONTEXT - 2), o, null, null)))
                    .getMessage().contains("room for 2"));
            GenerationOptions stop = GenerationOptions.builder().stopStrings("x").build();
            assertTrue(assertThrows(EdgeLmException.class, () -> s.submit(new GenerationRequest(prompt(1, 3), stop, null, null)))
                    .getMessage().contains("decoder"));
            assertTrue(assertThrows(EdgeLmException.class,
                    () -> s.submit(new GenerationRequest(prompt(1, 3), o, null, null, new int[] {4}))).getMessage().contains("snapshotAt"));
            assertThrows(EdgeLmException.class, () -> new BatchOptions(0, 10, 0, 1));
        }
        BatchScheduler closed = scheduler(1);
        closed.close();
        assertThrows(EdgeLmException.class, () -> closed.submit(new GenerationRequest(prompt(1, 3),
                GenerationOptions.builder().build(), null, null)));
    }

    @Test
    void closeCancelsWhatIsStillRunning() {
        BatchScheduler s = scheduler(1);
        Generation running = s.submit(new GenerationRequest(prompt(7, 4), GenerationOptions.builder().build(), null, null));
        Generation waiting = s.submit(new GenerationRequest(prompt(8, 4), GenerationOptions.builder().build(), null, null));
        s.close();
        assertEquals(StopReason.CANCELLED, running.join().reason());
        assertEquals(StopReason.CANCELLED, waiting.join().reason());
        assertTrue(new String(new byte[0], StandardCharsets.UTF_8).isEmpty());
    }
}
