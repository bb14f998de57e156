package dev.edgelm.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.Fixtures;
import dev.edgelm.chat.tools.QwenToolCallParser;
import dev.edgelm.server.ApiException;
import dev.edgelm.server.ChatRequestFuzzing;
import dev.edgelm.template.ChatFormat;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Fuzz targets for what the server reads from clients and from the model: a {@code /v1/chat/completions} body
 * (parsed field by field, then rendered through the Qwen3.5 template) and the tool-call markup of a reply, fed to
 * {@link QwenToolCallParser} in pieces. Corpora: {@code src/test/resources/dev/edgelm/fuzz/ServerFormatsFuzzTestInputs/}.
 */
class ServerFormatsFuzzTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** get_weather(city: string, days: integer), search(query: string, filters: object), as in the parser's unit test. */
    private static final Map<String, Set<String>> TOOLS = QwenToolCallParser.stringParameters(List.of(
            Map.of("type", "function", "function", Map.of("name", "get_weather", "parameters", Map.of("type", "object",
                    "properties", Map.of("city", Map.of("type", "string"), "days", Map.of("type", "integer"))))),
            Map.of("type", "function", "function", Map.of("name", "search", "parameters", Map.of("type", "object",
                    "properties", Map.of("query", Map.of("type", "string"), "filters", Map.of("type", "object")))))));

    private static ChatFormat chat;

    private static synchronized ChatFormat chat() {
        if (chat == null) {
            chat = ChatFormat.load(Fixtures.path("qwen35/tiny-chat"));
        }
        return chat;
    }

    /**
     * Any bytes as a chat-completions body: a prompt, or the server's 400 (an {@link ApiException} with a
     * message), never anything else.
     */
    @FuzzTest
    void chatRequest(byte[] data) {
        ChatFormat format = chat();
        try {
            ChatRequestFuzzing.prompt(data, format);
        } catch (ApiException refused) {
            assertTrue(refused.status() >= 400 && refused.status() < 500, "status " + refused.status());
            assertTrue(refused.getMessage() != null && !refused.getMessage().isBlank(), "an error without a message");
        }
    }

    /**
     * Any text as a reply, pushed in pieces whose lengths the first byte seeds, then finished. The parser never
     * throws; the pieces give the same content and calls as the whole text at once; every call's arguments are
     * one JSON object; what the listener heard adds up to the same.
     */
    @FuzzTest
    void toolCalls(byte[] data) throws Exception {
        if (data.length == 0) {
            return;
        }
        String text = new String(data, 1, data.length - 1, StandardCharsets.UTF_8);
        StringBuilder heardContent = new StringBuilder();
        Map<Integer, StringBuilder> heardArgs = new java.util.TreeMap<>();
        QwenToolCallParser streamed = new QwenToolCallParser(TOOLS, new QwenToolCallParser.Listener() {
            @Override
            public void onContent(String t) {
                heardContent.append(t);
            }

            @Override
            public void onToolCallStart(int index, String name) {
                heardArgs.put(index, new StringBuilder());
            }

            @Override
            public void onToolCallArguments(int index, String fragment) {
                heardArgs.get(index).append(fragment);
            }
        });
        long seed = data[0] & 0xff;
        for (int i = 0; i < text.length(); ) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int n = Math.min(text.length() - i, 1 + (int) ((seed >>> 33) % 13));
            streamed.push(text.substring(i, i + n));
            i += n;
        }
        streamed.finish();
        QwenToolCallParser whole = QwenToolCallParser.parse(text, TOOLS);
        assertEquals(whole.content(), streamed.content(), "content, pieces against whole");
        assertEquals(whole.calls(), streamed.calls(), "calls, pieces against whole");
        assertEquals(streamed.content(), heardContent.toString(), "content heard");
        assertEquals(streamed.calls().size(), heardArgs.size(), "calls heard");
        for (int i = 0; i < streamed.calls().size(); i++) {
            String args = streamed.calls().get(i).arguments();
            JsonNode tree = JSON.readTree(args);
            assertTrue(tree != null && tree.isObject(), "arguments are not a JSON object: " + args);
            assertEquals(args, heardArgs.get(i).toString(), "arguments heard");
        }
    }
}
