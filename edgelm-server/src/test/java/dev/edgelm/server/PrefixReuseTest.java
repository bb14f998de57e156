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
 * A 10-turn chat re-sent whole each turn, as chat clients do: every turn after the first reuses the state up to
 * the last message it shares with the turn before, and each reply equals the reply of a cold session that
 * prefills the whole prompt from scratch.
 */
class PrefixReuseTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void tenTurnsPrefillOnlyTheirNewTokensAndMatchAColdStart() throws Exception {
        ChatFormat format = ChatFormat.load(TinyChat.DIR);
        try (TestServer server = new TestServer(1, 4, 2048, ServerOptions.loopback(0));
             Engine cold = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withMaxNumTokens(2048))) {
            List<Map<String, Object>> messages = new ArrayList<>();
            messages.add(Map.of("role", "system", "content", TinyChat.SYSTEM));
            int[] previous = null;
            for (int turn = 0; turn < 10; turn++) {
                messages.add(Map.of("role", "user", "content", "question number " + turn + "?"));
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("messages", messages);
                body.put("max_tokens", 6);
                body.put("temperature", 0);
                JsonNode r = JSON.readTree(server.post("/v1/chat/completions", JSON.writeValueAsString(body)).body());
                String reply = r.get("choices").get(0).get("message").get("content").asText();
                int promptTokens = r.get("usage").get("prompt_tokens").asInt();
                int cached = r.get("usage").get("prompt_tokens_details").get("cached_tokens").asInt();

                int[] prompt = format.encodePrompt(messages, null, true, Map.of("enable_thinking", false));
                assertEquals(prompt.length, promptTokens);
                Session s = cold.newSession();
                s.prefill(prompt);
                GenerationResult g = s.generate(GenerationOptions.builder().maxNewTokens(6)
                        .stopTokenIds(format.stopTokenIds()).build(), decoder(format), dev.edgelm.engine.GenerationListener.NONE);
                assertEquals(g.text().strip(), reply.strip(), "turn " + turn + ": the reply of a cold start");

                if (turn == 0) {
                    assertEquals(0, cached);
                } else {
                    // the state is kept up to the last <|im_start|> shared with the previous turn's prompt + reply
                    int shared = 0;
                    while (shared < previous.length && prompt[shared] == previous[shared]) {
                        shared++;
                    }
                    int expected = 0;
                    for (int i = 1; i <= shared && i < prompt.length; i++) {
                        if (prompt[i] == 8193) {
                            expected = i;
                        }
                    }
                    assertEquals(expected, cached, "turn " + turn);
                    // new tokens: those past the previous prompt; re-fed besides them: the previous prompt's last
                    // message, the assistant header (<|im_start|>assistant\n<think>\n\n</think>\n\n), which the
                    // template renders differently once the reply is in the history
                    int fresh = prompt.length - previous.length;
                    int header = previous.length - lastStart(previous);
                    assertTrue(header <= 10, "header " + header);
                    assertTrue(promptTokens - cached <= fresh + header, "turn " + turn + " prefilled " + (promptTokens - cached)
                            + " of " + promptTokens + " tokens; new: " + fresh);
                }
                previous = prompt;
                messages.add(Map.of("role", "assistant", "content", reply));
            }
        }
    }

    private static int lastStart(int[] ids) {
        int last = -1;
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == 8193) {
                last = i;
            }
        }
        return last;
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
