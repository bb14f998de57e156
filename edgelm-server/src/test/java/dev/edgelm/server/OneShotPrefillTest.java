package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.ChatPrompt;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.template.ChatFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Where the server cuts and snapshots a chat prompt ({@link ServedModel#boundaries}), checked against positions
 * found in the rendered text itself (the token count of the text up to each ChatML header's newline), and the
 * one-shot path they make: the template's constant start primed at start, the new tokens in one prefill chunk,
 * the next turn resumed from the snapshot taken after the first, the replies those of a server without a cache.
 */
class OneShotPrefillTest {
    static Engine engine;
    static ChatFormat format;

    @BeforeAll
    static void load() {
        engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withMaxNumTokens(1024));
        format = ChatFormat.load(TinyChat.DIR);
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static String render(List<Map<String, Object>> messages) {
        return ChatPrompt.render(format.template(), messages, null, Map.of("enable_thinking", false)).text();
    }

    /** Tokens of the text up to the end of the {@code n}-th (0-based) occurrence of {@code marker}. */
    private static int tokensThrough(String text, String marker, int n) {
        int at = -1;
        for (int i = 0; i <= n; i++) {
            at = text.indexOf(marker, at + 1);
            assertTrue(at >= 0, marker + " #" + n + " in " + text);
        }
        return format.tokenizer().encode(text.substring(0, at + marker.length())).length;
    }

    /** Tokens of the text before the {@code n}-th occurrence of {@code marker}. */
    private static int tokensBefore(String text, String marker, int n) {
        int at = -1;
        for (int i = 0; i <= n; i++) {
            at = text.indexOf(marker, at + 1);
        }
        return format.tokenizer().encode(text.substring(0, at)).length;
    }

    @Test
    void aOneShotPromptIsCutAfterItsFirstHeaderAndSnapshotsItsLastLater() {
        try (BatchBackend backend = new BatchBackend(engine, 1, 4, 0)) {
            ServedModel m = new ServedModel("t", engine, format, backend);
            String text = render(List.of(Map.of("role", "user", "content", "Write a haiku about the sea.")));
            ServedModel.Boundaries b = m.boundaries(format.tokenizer().encode(text));
            assertArrayEquals(new int[] {tokensThrough(text, "<|im_start|>user\n", 0)}, b.cuts());
            assertArrayEquals(new int[] {tokensThrough(text, "<|im_start|>assistant\n", 0)}, b.later());

            String sys = render(List.of(Map.of("role", "system", "content", "Be brief."),
                    Map.of("role", "user", "content", "Hi")));
            ServedModel.Boundaries bs = m.boundaries(format.tokenizer().encode(sys));
            assertArrayEquals(new int[] {tokensThrough(sys, "<|im_start|>system\n", 0), tokensBefore(sys, "<|im_start|>user", 0)},
                    bs.cuts(), "the system prompt's end is a cut: conversations with that system prompt share it");
            assertArrayEquals(new int[] {tokensThrough(sys, "<|im_start|>assistant\n", 0)}, bs.later());

            String chat = render(List.of(Map.of("role", "user", "content", "Hi"), Map.of("role", "assistant", "content", "Hello!"),
                    Map.of("role", "user", "content", "How are you?")));
            ServedModel.Boundaries bc = m.boundaries(format.tokenizer().encode(chat));
            assertArrayEquals(new int[] {tokensThrough(chat, "<|im_start|>user\n", 0), tokensThrough(chat, "<|im_start|>assistant\n", 0)},
                    bc.cuts(), "the earlier turn's parting point is a cut, as it was that turn's snapshot");
            assertArrayEquals(new int[] {tokensThrough(chat, "<|im_start|>assistant\n", 1)}, bc.later());
        }
    }

    @Test
    void primedOneShotPrefillsOnlyItsOwnTokensInOneChunkAndTheNextTurnResumesAfterIt() throws Exception {
        GenerationOptions greedy = GenerationOptions.builder().temperature(0).maxNewTokens(8).stopTokenIds(format.stopTokenIds()).build();
        try (BatchBackend warm = new BatchBackend(engine, 1, 4, 64L << 20);
             BatchBackend cold = new BatchBackend(engine, 1, 4, 0)) {
            ServedModel m = new ServedModel("t", engine, format, warm);
            ServedModel c = new ServedModel("t", engine, format, cold);
            m.prime();
            List<Map<String, Object>> turn1 = List.of(Map.of("role", "user", "content", "Write a haiku about the sea."));
            String text1 = render(turn1);
            int[] p1 = format.tokenizer().encode(text1);
            GenerationBackend.Handle h1 = submit(m, p1, greedy);
            GenerationResult r1 = h1.join();
            assertEquals(tokensThrough(text1, "<|im_start|>user\n", 0), h1.cachedTokens(), "the primed start");
            assertEquals(1, h1.prefillChunks(), "the rest in one chunk");
            assertArrayEquals(submit(c, p1, greedy).join().tokens(), r1.tokens());

            String reply = m.tokenizer().decode(r1.tokens(), true);
            List<Map<String, Object>> turn2 = List.of(turn1.get(0), Map.of("role", "assistant", "content", reply),
                    Map.of("role", "user", "content", "Another one."));
            String text2 = render(turn2);
            int[] p2 = format.tokenizer().encode(text2);
            GenerationBackend.Handle h2 = submit(m, p2, greedy); // at once: the snapshot is taken before it is admitted
            GenerationResult r2 = h2.join();
            assertEquals(tokensThrough(text1, "<|im_start|>assistant\n", 0), h2.cachedTokens(), "turn 1's prompt up to its last header");
            assertEquals(1, h2.prefillChunks());
            assertArrayEquals(submit(c, p2, greedy).join().tokens(), r2.tokens(), "the reply of a server without a cache");
        }
    }

    private static GenerationBackend.Handle submit(ServedModel m, int[] prompt, GenerationOptions options) {
        ServedModel.Boundaries b = m.boundaries(prompt);
        return m.backend().submit(new GenerationBackend.Request(prompt, b.cuts(), options, m.decoder(), null, b.later()));
    }
}
