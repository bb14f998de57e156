package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** A saved session continues, in another session, exactly as the original does. */
class SessionSaveTest {
    @Test
    void aRestoredSessionGeneratesWhatTheOriginalGenerates() throws Exception {
        try (Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1));
             Engine tinyA = Engine.load(Path.of("src/test/resources/fixtures/qwen35/tiny-a"), EngineOptions.defaults().withThreads(1))) {
            int[] prompt = TinyChat.ids("turn1_prompt_ids");
            Session original = engine.newSession();
            original.prefill(prompt);
            GenerationOptions greedy = GenerationOptions.builder().maxNewTokens(6).build();
            original.generate(greedy); // ends with a pending token (max tokens)
            ByteArrayOutputStream saved = new ByteArrayOutputStream();
            original.save(saved);

            Session restored = engine.newSession();
            restored.restore(new ByteArrayInputStream(saved.toByteArray()));
            assertArrayEquals(original.tokens(), restored.tokens());
            assertEquals(original.pendingToken(), restored.pendingToken());
            int[] next = original.generate(greedy).tokens();
            assertArrayEquals(next, restored.generate(greedy).tokens(), "the same continuation, token for token");
            assertTrue(next.length > 0 && !Arrays.equals(next, new int[next.length]));

            Session other = tinyA.newSession();
            EdgeLmException e = assertThrows(EdgeLmException.class,
                    () -> other.restore(new ByteArrayInputStream(saved.toByteArray())));
            assertTrue(e.getMessage().contains("another configuration"), e.getMessage());
            assertEquals(0, other.tokens().length, "a refused state leaves the session empty");
        }
    }
}
