package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.util.EdgeLmException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SessionTest {
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    static final int VOCAB = 512;

    static Engine engine;
    static int[] prompt;
    static int[] greedy;
    static float[] stepLogits;
    static float[] tokenByToken;

    @BeforeAll
    static void load() {
        engine = Engine.load(TINY_A, EngineOptions.defaults().withThreads(1));
        prompt = Npy.read(TINY_A.resolve("golden/prompt_ids.npy")).toIntArray();
        greedy = Npy.read(TINY_A.resolve("golden/greedy_ids.npy")).toIntArray();
        stepLogits = Npy.read(TINY_A.resolve("golden/greedy_step_logits.npy")).floats();
        tokenByToken = Npy.read(TINY_A.resolve("golden/logits_token_by_token.npy")).floats();
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static int[] greedy(int from, int to) {
        return Arrays.copyOfRange(greedy, from, to);
    }

    static float[] row(float[] matrix, int row) {
        return Arrays.copyOfRange(matrix, row * VOCAB, (row + 1) * VOCAB);
    }

    static void assertClose(float[] expected, float[] actual, float tolerance) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], actual[i], tolerance, "index " + i);
        }
    }

    static GenerationOptions greedyUpTo(int n) {
        return GenerationOptions.builder().maxNewTokens(n).build();
    }

    @Test
    void greedyGenerationReproducesTheReference() {
        Session s = engine.newSession();
        float[] logits = s.prefill(prompt);
        assertClose(row(stepLogits, 0), logits, 1e-3f);
        List<Integer> heard = new ArrayList<>();
        GenerationResult r = s.generate(greedyUpTo(24), new GenerationListener() {
            @Override
            public void onToken(int id) {
                heard.add(id);
            }
        });
        assertArrayEquals(greedy, r.tokens());
        assertEquals(StopReason.MAX_TOKENS, r.reason());
        assertArrayEquals(greedy, heard.stream().mapToInt(Integer::intValue).toArray());
        assertEquals(41, s.tokensPrefilled());
        assertEquals(41, s.lastPrefillTokens());
        assertEquals(24, s.tokensDecoded());
        // the last emitted token is pending: consumed 41 + 23
        assertEquals(64, s.position());
        assertEquals(greedy[23], s.pendingToken().getAsInt());
        assertEquals(65, s.tokens().length);
    }

    @Test
    void interleavedSessionsKeepTheirOwnLogits() {
        // the sessions share the model's scratch buffers; each must still see only its own logits
        Session a = engine.newSession();
        Session b = engine.newSession();
        a.prefill(prompt);
        a.decode(greedy[0]); // a's next token now comes from the logits of this decode step
        b.prefill(java.util.Arrays.copyOf(prompt, 17));
        assertClose(row(tokenByToken, 17), b.decode(prompt[17]), 1e-3f);
        assertArrayEquals(greedy(1, 4), a.generate(greedyUpTo(3)).tokens());
    }

    @Test
    void tokenByTokenPrefillEqualsOneChunk() {
        Session one = engine.newSession();
        float[] a = one.prefill(prompt, ChunkPlan.maxChunk(prompt.length));
        Session each = engine.newSession();
        float[] b = each.prefill(prompt, ChunkPlan.maxChunk(1));
        assertClose(a, b, 1e-4f);
        assertClose(row(tokenByToken, prompt.length - 1), b, 1e-3f);
        assertArrayEquals(greedy, each.generate(greedyUpTo(24)).tokens());
    }

    @Test
    void decodeFeedsOneTokenAtATime() {
        Session s = engine.newSession();
        s.prefill(prompt);
        for (int i = 0; i < 5; i++) {
            float[] logits = s.decode(greedy[i]);
            assertClose(row(stepLogits, i + 1), logits, 1e-3f);
        }
        assertEquals(46, s.position());
        assertArrayEquals(greedy(5, 24), s.generate(greedyUpTo(19)).tokens());
    }

    @Test
    void theNextTurnFeedsThePendingTokenFirst() {
        Session s = engine.newSession();
        s.prefill(prompt);
        GenerationResult first = s.generate(greedyUpTo(10));
        assertArrayEquals(greedy(0, 10), first.tokens());
        assertTrue(s.pendingToken().isPresent());
        // a second generate continues the same greedy sequence
        assertArrayEquals(greedy(10, 24), s.generate(greedyUpTo(14)).tokens());

        // a prefill after a generation equals prefilling everything in one go
        Session t = engine.newSession();
        t.prefill(prompt);
        t.generate(greedyUpTo(10));
        int[] more = {7, 8, 9};
        float[] continued = t.prefill(more);
        assertEquals(3, t.lastPrefillTokens());
        assertFalse(t.pendingToken().isPresent());
        int[] all = concat(prompt, greedy(0, 10), more);
        assertArrayEquals(all, t.tokens());
        float[] scratch = engine.newSession().prefill(all);
        assertClose(scratch, continued, 1e-4f);
    }

    @Test
    void capacityErrorsLeaveTheSessionUsable() {
        try (Engine small = Engine.load(TINY_A, EngineOptions.defaults().withThreads(1).withMaxNumTokens(50))) {
            Session s = small.newSession();
            s.prefill(prompt);
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> s.prefill(new int[10]));
            assertTrue(e.getMessage().contains("51 tokens needed"), e.getMessage());
            assertTrue(e.getMessage().contains("capacity is 50"), e.getMessage());
            assertTrue(e.getMessage().contains("9 available"), e.getMessage());
            assertEquals(41, s.position());
            e = assertThrows(EdgeLmException.class, () -> s.generate(greedyUpTo(10)));
            assertTrue(e.getMessage().contains("room for 9 more"), e.getMessage());
            assertEquals(41, s.position());

            assertArrayEquals(greedy(0, 5), s.generate(greedyUpTo(5)).tokens());
            // no limit: generation runs to the end of the context
            GenerationResult rest = s.generate(GenerationOptions.greedy());
            assertArrayEquals(greedy(5, 9), rest.tokens());
            assertEquals(StopReason.CONTEXT_FULL, rest.reason());
            assertEquals(50, s.tokens().length);
            assertThrows(EdgeLmException.class, () -> s.decode(1));
            assertEquals(StopReason.CONTEXT_FULL, s.generate(GenerationOptions.greedy()).reason());
        }
    }

    @Test
    void badTokenIdsChangeNothing() {
        Session s = engine.newSession();
        s.prefill(prompt);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> s.prefill(new int[] {1, 2, VOCAB}));
        assertTrue(e.getMessage().contains("token id 512"), e.getMessage());
        assertEquals(41, s.position());
        assertArrayEquals(greedy, s.generate(greedyUpTo(24)).tokens());
        assertThrows(EdgeLmException.class, () -> engine.newSession().generate(greedyUpTo(1)));
    }

    @Test
    void cancellationFromAnotherThreadStopsAfterTheCurrentStep() throws Exception {
        Session s = engine.newSession();
        s.prefill(prompt);
        CountDownLatch fifthToken = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        Thread canceller = new Thread(() -> {
            try {
                fifthToken.await();
                s.cancel();
                cancelled.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        canceller.start();
        GenerationResult r = s.generate(GenerationOptions.greedy(), new GenerationListener() {
            int n;

            @Override
            public void onToken(int id) {
                if (++n == 5) {
                    fifthToken.countDown();
                    try {
                        assertTrue(cancelled.await(10, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        });
        canceller.join();
        assertEquals(StopReason.CANCELLED, r.reason());
        assertArrayEquals(greedy(0, 5), r.tokens());
        assertFalse(s.pendingToken().isPresent(), "cancelled: every emitted token consumed");
        assertEquals(46, s.position());
        // the request is used up: the session continues where it stopped
        assertArrayEquals(greedy(5, 24), s.generate(greedyUpTo(19)).tokens());
    }

    @Test
    void cancellationWhileRunningUnboundedGeneration() throws Exception {
        Session s = engine.newSession();
        s.prefill(prompt);
        CountDownLatch started = new CountDownLatch(1);
        GenerationResult[] result = new GenerationResult[1];
        Thread generator = new Thread(() -> result[0] = s.generate(GenerationOptions.greedy(), new GenerationListener() {
            @Override
            public void onToken(int id) {
                started.countDown();
            }
        }));
        generator.start();
        assertTrue(started.await(10, TimeUnit.SECONDS));
        s.cancel();
        generator.join(10_000);
        assertFalse(generator.isAlive());
        GenerationResult r = result[0];
        assertTrue(r.reason() == StopReason.CANCELLED || r.reason() == StopReason.CONTEXT_FULL, r.reason().toString());
        int n = r.tokens().length;
        assertArrayEquals(greedy(0, Math.min(n, 24)), Arrays.copyOf(r.tokens(), Math.min(n, 24)));
    }

    @Test
    void stopTokensEndGenerationAndAreNeitherEmittedNorFed() {
        Session s = engine.newSession();
        s.prefill(prompt);
        List<Integer> heard = new ArrayList<>();
        GenerationOptions stopAt123 = GenerationOptions.builder().maxNewTokens(24).stopTokenIds(500, greedy[3]).build();
        GenerationResult r = s.generate(stopAt123, new GenerationListener() {
            @Override
            public void onToken(int id) {
                heard.add(id);
            }
        });
        assertEquals(StopReason.STOP_TOKEN, r.reason());
        assertEquals(greedy[3], r.stopToken());
        assertArrayEquals(greedy(0, 3), r.tokens());
        assertEquals(List.of(greedy[0], greedy[1], greedy[2]), heard);
        assertFalse(s.pendingToken().isPresent());
        assertEquals(44, s.position());
        assertArrayEquals(concat(prompt, greedy(0, 3)), s.tokens());
        // the state ends right before the stop token: without the stop, greedy picks it again
        assertArrayEquals(greedy(3, 24), s.generate(greedyUpTo(21)).tokens());
    }

    @Test
    void stopStringsWithholdTheirTextAndWhatFollows() {
        // a made-up text for each id: "<id>"
        TokenDecoder decoder = TokenDecoder.ofBytes(id -> ("<" + id + ">").getBytes(StandardCharsets.UTF_8));
        Session s = engine.newSession();
        s.prefill(prompt);
        StringBuilder streamed = new StringBuilder();
        // "><131" spans the end of token 4 (123) and token 5 (131)
        GenerationOptions o = GenerationOptions.builder().maxNewTokens(24).stopStrings("never", "><131").build();
        GenerationResult r = s.generate(o, decoder, new GenerationListener() {
            @Override
            public void onText(String piece) {
                streamed.append(piece);
            }
        });
        assertEquals(StopReason.STOP_STRING, r.reason());
        assertEquals("><131", r.stopString());
        assertEquals("<200><41><41><123><123", r.text());
        assertEquals(r.text(), streamed.toString());
        assertArrayEquals(greedy(0, 6), r.tokens());
        assertEquals(greedy[5], s.pendingToken().getAsInt());

        // without a stop string the whole text comes out, the last piece flushed at the end
        Session t = engine.newSession();
        t.prefill(prompt);
        GenerationResult all = t.generate(GenerationOptions.builder().maxNewTokens(3).stopStrings("<41><9").build(), decoder, GenerationListener.NONE);
        assertEquals("<200><41><41>", all.text());
        assertEquals(StopReason.MAX_TOKENS, all.reason());
        assertThrows(EdgeLmException.class, () -> t.generate(o));
    }

    @Test
    void sampledGenerationIsReproducibleBySeedAndForksAreIndependent() {
        Session s = engine.newSession();
        s.prefill(prompt);
        Session fork = s.fork();
        GenerationOptions o = GenerationOptions.builder().maxNewTokens(16).temperature(1.0f).topK(50).topP(0.95f).seed(99).build();
        GenerationResult a = s.generate(o);
        assertEquals(41, fork.position(), "a fork does not move with its origin");
        GenerationResult b = fork.generate(o);
        assertArrayEquals(a.tokens(), b.tokens());
        assertEquals(99, a.seed());
        Session other = engine.newSession();
        other.prefill(prompt);
        GenerationResult c = other.generate(o.toBuilder().seed(100).build());
        assertFalse(Arrays.equals(a.tokens(), c.tokens()));
        assertFalse(Arrays.equals(greedy(0, 16), a.tokens()), "temperature 1 over 512 tokens does not stay greedy");
    }

    @Test
    void rollbackReturnsToACheckpoint() {
        Session s = engine.newSession();
        s.prefill(prompt);
        Session.Checkpoint afterPrompt = s.checkpoint();
        s.generate(GenerationOptions.builder().maxNewTokens(6).temperature(1f).seed(5).build());
        s.prefill(new int[] {1, 2, 3});
        s.rollback(afterPrompt);
        assertEquals(41, s.position());
        assertArrayEquals(prompt, s.tokens());
        assertArrayEquals(greedy, s.generate(greedyUpTo(24)).tokens());
    }

    @Test
    void everyPromptLengthGivesTheSameFirstTokenWithSmallChunks() {
        int[] longPrompt = Npy.read(TINY_A.resolve("golden/long_prompt_ids.npy")).toIntArray();
        float[] reference = Npy.read(TINY_A.resolve("golden/long_logits_full.npy")).floats();
        try (Engine chunked = Engine.load(TINY_A, EngineOptions.defaults().withThreads(1).withPrefillChunk(16))) {
            for (int len = 1; len <= 80; len++) {
                int[] ids = Arrays.copyOf(longPrompt, len);
                Session small = chunked.newSession();
                small.prefill(ids);
                int fromChunks = small.generate(greedyUpTo(1)).tokens()[0];
                Session one = engine.newSession();
                one.prefill(ids, ChunkPlan.maxChunk(len));
                int fromOneChunk = one.generate(greedyUpTo(1)).tokens()[0];
                int expected = Sampler.argmax(row(reference, len - 1));
                assertEquals(expected, fromOneChunk, "prompt length " + len + ", one chunk");
                assertEquals(expected, fromChunks, "prompt length " + len + ", chunks of 16");
            }
        }
    }

    @Test
    void defaultOptionsComeFromTheModel() {
        // tiny-a has no generation_config.json: greedy, stop at config.json's eos_token_id (500)
        GenerationOptions o = engine.defaultGenerationOptions().build();
        assertTrue(o.isGreedy());
        assertArrayEquals(new int[] {500}, o.stopTokenIds());
    }

    static int[] concat(int[]... parts) {
        int n = 0;
        for (int[] p : parts) {
            n += p.length;
        }
        int[] out = new int[n];
        int at = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
