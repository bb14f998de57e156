package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.chat.TinyChat;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The API's protocol on raw HTTP: malformed input of each kind, limits, the side endpoints. */
class HttpProtocolTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = new TestServer(1, 4, 128, ServerOptions.loopback(0).withLimits(64 << 10, 8));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The response is an OpenAI error object with this status, naming {@code param} (null: any). */
    private static JsonNode error(HttpResponse<String> r, int status, String param) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals(status, e.get("code").asInt());
        assertTrue(e.get("message").isTextual());
        assertTrue(e.get("type").isTextual());
        assertFalse(r.body().contains("\tat "), "no stack trace");
        if (param != null) {
            assertEquals(param, e.path("param").asText(), r.body());
        }
        return e;
    }

    private static HttpResponse<String> chat(String body) throws Exception {
        return server.post("/v1/chat/completions", body);
    }

    private static String user(String extra) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" + extra + "}";
    }

    @Test
    void malformedBodiesAre400sNamingTheField() throws Exception {
        error(chat("{not json"), 400, null);
        error(chat("[1,2]"), 400, null);
        error(chat(""), 400, null);
        error(chat("{\"messages\":[]} trailing"), 400, null);
        error(chat("{\"messages\": 5}"), 400, "messages");
        error(chat("{}"), 400, "messages");
        error(chat("{\"messages\":[]}"), 400, "messages");
        error(chat("{\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]}"), 400, "messages[0].role");
        error(chat("{\"messages\":[{\"content\":\"x\"}]}"), 400, "messages[0].role");
        error(chat("{\"messages\":[{\"role\":\"user\"}]}"), 400, "messages[0].content");
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":7}]}"), 400, "messages[0].content");
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}"), 400, "messages[0].content[0].type");
        error(chat(user(",\"temperature\":\"hot\"")), 400, "temperature");
        error(chat(user(",\"max_tokens\":-3")), 400, "max_tokens");
        error(chat(user(",\"max_tokens\":1.5")), 400, "max_tokens");
        error(chat(user(",\"top_k\":-1")), 400, "top_k");
        error(chat(user(",\"min_p\":2")), 400, "min_p");
        error(chat(user(",\"stop\":[1]")), 400, "stop");
        error(chat(user(",\"stop\":\"\"")), 400, "stop");
        error(chat(user(",\"top_logprobs\":3")), 400, "top_logprobs");
        error(chat(user(",\"n\":3")), 400, "n");
        error(chat(user(",\"response_format\":{\"type\":\"yaml\"}")), 400, "response_format.type");
        error(chat(user(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":123}}")), 400,
                "response_format.json_schema.schema");
        error(chat(user(",\"response_format\":{\"type\":\"json_object\",\"schema\":{\"type\":\"hiccup\"}}")), 400,
                "response_format.schema.type");
        error(chat(user(",\"tools\":[{\"type\":\"function\"}]")), 400, "tools[0].function");
        error(chat(user(",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a b\"}}]")), 400, "tools[0].function.name");
        error(chat(user(",\"tools\":[{\"type\":\"retrieval\"}]")), 400, "tools[0].type");
        error(chat(user(",\"tool_choice\":\"sometimes\"")), 400, "tool_choice");
        error(chat(user(",\"tool_choice\":\"required\"")), 400, "tool_choice");
        error(chat(user(",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],"
                + "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}")), 400, "tool_choice.function.name");
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"tool_calls\":[{\"type\":\"function\","
                + "\"function\":{\"name\":\"f\",\"arguments\":\"{broken\"}}]}]}"), 400, "messages[1].tool_calls[0].function.arguments");
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"messages\":[]}"), 400, null); // duplicate key
    }

    @Test
    void limitsAreEnforced() throws Exception {
        StringBuilder deep = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            deep.append('[');
        }
        error(chat("{\"x\":" + deep + "}"), 400, null);
        error(chat("{\"messages\":[" + "{\"role\":\"user\",\"content\":\"a\"},".repeat(9) + "{\"role\":\"user\",\"content\":\"a\"}]}"),
                400, "messages");
        String big = "x".repeat(70 << 10);
        error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"" + big + "\"}]}"), 413, null);
        // a prompt longer than the context (128 tokens here): 400 naming both lengths
        String longText = "word ".repeat(400);
        JsonNode e = error(chat("{\"messages\":[{\"role\":\"user\",\"content\":\"" + longText + "\"}]}"), 400, null);
        assertEquals("exceed_context_size_error", e.get("type").asText());
        assertTrue(e.get("message").asText().contains("context holds 128"), e.toString());
        // max_tokens beyond the context is clamped: the reply stops at the context's end, as "length"
        HttpResponse<String> r = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":100000,\"temperature\":0}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode u = JSON.readTree(r.body()).get("usage");
        assertTrue(u.get("total_tokens").asInt() <= 128, r.body());
    }

    /**
     * A refused body reaches its client as a 413 every time, also when the client is still sending: the server
     * reads the rest before it closes, so the kernel has no unread bytes to answer with a reset.
     */
    @Test
    void oversizeBodiesAlwaysGetTheir413() throws Exception {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "y".repeat(2 << 20) + "\"}]}";
        for (int i = 0; i < 12; i++) {
            error(chat(body), 413, null);
        }
        // and the server still answers on the next connection
        assertEquals(200, server.get("/health").statusCode());
    }

    /** The same for a body of unknown length (chunked): the server reads past its limit to the drain bound. */
    @Test
    void oversizeChunkedBodiesAlwaysGetTheir413() throws Exception {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "y".repeat(2 << 20) + "\"}]}";
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int i = 0; i < 12; i++) {
            // fromPublisher without a length: no Content-Length, the client sends the body chunked
            HttpRequest req = HttpRequest.newBuilder(URI.create(server.base + "/v1/chat/completions"))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofString(body))).build();
            error(http.send(req, HttpResponse.BodyHandlers.ofString()), 413, null);
        }
    }

    /**
     * A client that declares too large a body and waits for "100 Continue" gets its 413 at once, without being
     * invited to upload what would be refused (raw socket: nothing of the body is ever sent).
     */
    @Test
    void oversizeBodyWithExpectContinueIsRefusedBeforeTheUpload() throws Exception {
        URI uri = URI.create(server.base);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(10_000);
            String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: " + uri.getHost() + "\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + (10 << 20) + "\r\nExpect: 100-continue\r\n\r\n";
            socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            String status = in.readLine(); // a read timeout here (SocketTimeoutException) is the failure
            assertTrue(status != null && status.startsWith("HTTP/1.1 413"), "status line: " + status);
        }
    }

    @Test
    void unknownRoutesAndMethods() throws Exception {
        error(server.get("/v1/nothing"), 404, null);
        error(server.get("/v1/chat/completions"), 405, null);
    }

    @Test
    void healthModelsAndMetrics() throws Exception {
        HttpResponse<String> h = server.get("/health");
        assertEquals(200, h.statusCode());
        assertEquals("ok", JSON.readTree(h.body()).get("status").asText());
        JsonNode models = JSON.readTree(server.get("/v1/models").body());
        assertEquals("list", models.get("object").asText());
        assertEquals(TestServer.MODEL_ID, models.get("data").get(0).get("id").asText());
        chat(user(",\"max_tokens\":2"));
        String metrics = server.get("/metrics").body();
        assertTrue(metrics.contains("edgelm_requests_total{endpoint=\"chat\",status=\"200\"}"), metrics);
        assertTrue(metrics.contains("# TYPE edgelm_tokens_predicted_total counter"), metrics);
        assertTrue(metrics.contains("edgelm_requests_deferred 0"), metrics);
    }

    @Test
    void tokenizeDetokenizeAndTemplate() throws Exception {
        // the golden prompt's text tokenizes to the golden ids (Hugging Face's tokenizer)
        String prompt = TinyChat.text("turn1_prompt");
        JsonNode t = JSON.readTree(server.post("/tokenize", JSON.writeValueAsString(Map.of("content", prompt))).body());
        int[] golden = TinyChat.ids("turn1_prompt_ids");
        assertEquals(golden.length, t.get("tokens").size());
        for (int i = 0; i < golden.length; i++) {
            assertEquals(golden[i], t.get("tokens").get(i).asInt());
        }
        JsonNode d = JSON.readTree(server.post("/detokenize", JSON.writeValueAsString(Map.of("tokens", t.get("tokens")))).body());
        assertEquals(prompt, d.get("content").asText());
        JsonNode p = JSON.readTree(server.post("/tokenize", "{\"content\":\"a<|im_end|>\",\"with_pieces\":true}").body());
        assertEquals("<|im_end|>", p.get("tokens").get(1).get("piece").asText());
        assertEquals(TinyChat.IM_END, p.get("tokens").get(1).get("id").asInt());
        JsonNode s = JSON.readTree(server.post("/tokenize", "{\"content\":\"a<|im_end|>\",\"parse_special\":false}").body());
        assertTrue(s.get("tokens").size() > 2, "special tokens spelled out as text");
        error(server.post("/detokenize", "{\"tokens\":[999999]}"), 400, "tokens");
        String body = JSON.writeValueAsString(Map.of("messages", List.of(Map.of("role", "system", "content", TinyChat.SYSTEM),
                Map.of("role", "user", "content", List.of(Map.of("type", "text", "text", TinyChat.TURN1))))));
        assertEquals(prompt, JSON.readTree(server.post("/apply-template", body).body()).get("prompt").asText());
    }

    @Test
    void rawCompletions() throws Exception {
        HttpResponse<String> r = server.post("/v1/completions", "{\"prompt\":\"Hello\",\"max_tokens\":3,\"temperature\":0}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode o = JSON.readTree(r.body());
        assertEquals("text_completion", o.get("object").asText());
        assertEquals("length", o.get("choices").get(0).get("finish_reason").asText());
        assertEquals(3, o.get("usage").get("completion_tokens").asInt());
        error(server.post("/v1/completions", "{\"prompt\":\"Hello\",\"echo\":true}"), 400, "echo");
        error(server.post("/v1/completions", "{\"prompt\":{}}"), 400, "prompt");
        HttpResponse<String> s = server.post("/v1/completions", "{\"prompt\":[1,2,3],\"max_tokens\":2,\"stream\":true}");
        assertTrue(s.body().startsWith("data: {"), s.body());
        assertTrue(s.body().endsWith("data: [DONE]\n\n"), s.body());
    }
}
