package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A 10-turn chat re-sent whole each turn, as chat clients do, on the batched backend: every turn after the first
 * takes from the prefix cache exactly the tokens it shares with the previous turn's prompt and reply (through that
 * turn's {@code <|im_start|>assistant\n}: the template re-renders the reply without the generation prompt's empty
 * think block) and prefills only the rest; each reply equals the reply of a cold server (no cache) and of a cold
 * single-stream session that prefills the whole prompt from scratch.
 */
class PrefixReuseTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void tenTurnsPrefillOnlyTheirNewTokensAndMatchAColdStart() throws Exception {
        ChatFormat format = ChatFormat.load(TinyChat.DIR);
        try (TestServer server = new TestServer(1, 4, 2048, ServerOptions.loopback(0));
             TestServer coldServer = new TestServer(1, 4, 2048, 0, ServerOptions.loopback(0));
             Engine cold = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withMaxNumTokens(2048))) {
            List<Map<String, Object>> messages = new ArrayList<>();
            messages.add(Map.of("role", "system", "content", TinyChat.SYSTEM));
            int[] previous = null; // the previous turn's prompt followed by its reply
            int previousPrompt = 0;
            for (int turn = 0; turn < 10; turn++) {
                messages.add(Map.of("role", "user", "content", "question number " + turn + "?"));
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("messages", messages);
                body.put("max_tokens", 6);
                body.put("temperature", 0);
                String json = JSON.writeValueAsString(body);
                double prefilledBefore = ConcurrencyTest.metric(server, "edgelm_prompt_tokens_processed_total");
                JsonNode r = JSON.readTree(server.post("/v1/chat/completions", json).body());
                double prefilled = ConcurrencyTest.metric(server, "edgelm_prompt_tokens_processed_total") - prefilledBefore;
                JsonNode c = JSON.readTree(coldServer.post("/v1/chat/completions", json).body());
                String reply = r.get("choices").get(0).get("message").get("content").asText();
                int promptTokens = r.get("usage").get("prompt_tokens").asInt();
                int cached = r.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt();

                int[] prompt = format.encodePrompt(messages, null, true, Map.of("enable_thinking", false));
                assertEquals(prompt.length, promptTokens);
                Session s = cold.newSession();
                s.prefill(prompt);
                GenerationResult g = s.generate(GenerationOptions.builder().maxNewTokens(6)
                        .stopTokenIds(format.stopTokenIds()).build(), decoder(format), dev.edgelm.engine.GenerationListener.NONE);
                assertEquals(g.text().strip(), reply.strip(), "turn " + turn + ": the reply of a cold session");
                assertEquals(c.get("choices").get(0).get("message").get("content").asText(), reply,
                        "turn " + turn + ": the reply of a cold server");
                assertEquals(0, c.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt());

                if (turn == 0) {
                    assertEquals(0, cached);
                } else {
                    int shared = 0;
                    while (shared < previous.length && shared < prompt.length && prompt[shared] == previous[shared]) {
                        shared++;
                    }
                    assertEquals(shared, cached, "turn " + turn + ": the shared prefix comes from the cache");
                    // besides the tokens past the previous prompt, only its empty think block is re-fed
                    // (<think>\n\n</think>\n\n, re-rendered as the reply's own text once the reply is history)
                    assertTrue(previousPrompt - shared <= 6, "turn " + turn + ": parts " + (previousPrompt - shared)
                            + " tokens before the previous prompt's end");
                }
                assertEquals(promptTokens - cached, prefilled, "turn " + turn + ": prefilled only what is not cached");
                previous = new int[prompt.length + g.tokens().length];
                System.arraycopy(prompt, 0, previous, 0, prompt.length);
                System.arraycopy(g.tokens(), 0, previous, prompt.length, g.tokens().length);
                previousPrompt = prompt.length;
                messages.add(Map.of("role", "assistant", "content", reply));
            }
        }
    }

    private static dev.edgelm.engine.TokenDecoder decoder(ChatFormat format) {
        return () -> {
            var d = format.tokenizer().newDecoder(true);
            return new dev.edgelm.engine.TokenDecoder.Stream() {
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
}
