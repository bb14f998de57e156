package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Requests served together decode in one batched forward pass per step, and each one's greedy output is the
 * output of the same request served alone: N concurrent requests against the same requests one at a time on a
 * server with one slot and no cache.
 */
class BatchedServingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int N = 4;

    private static String greedy(int i) {
        return "{\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},{\"role\":\"user\",\"content\":\"request "
                + i + ": " + "tell me something ".repeat(i + 1) + "\"}],\"max_tokens\":" + (12 + 3 * i)
                + ",\"temperature\":0,\"logprobs\":true}";
    }

    /** The token ids of a reply, from its log-probability entries (one per generated token). */
    private static List<Integer> ids(JsonNode response) {
        List<Integer> out = new ArrayList<>();
        for (JsonNode t : response.get("choices").get(0).get("logprobs").get("content")) {
            out.add(t.get("id").asInt());
        }
        return out;
    }

    @Test
    void concurrentGreedyRequestsEqualTheSameRequestsOneAtATime() throws Exception {
        List<JsonNode> together = new ArrayList<>();
        double tokens;
        double steps;
        try (TestServer s = new TestServer(N + 1, 8, 4096, ServerOptions.loopback(0))) {
            // a long sampled stream keeps a sequence decoding, so every step of the greedy requests is shared
            try (RawHttp running = new RawHttp(s.server.port(), "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\","
                    + "\"content\":\"hi\"}],\"max_tokens\":3000,\"temperature\":1,\"seed\":1,\"stream\":true}")) {
                assertEquals(200, running.status);
                assertNotNull(running.nextData());
                assertNotNull(running.nextData());
                List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
                for (int i = 0; i < N; i++) {
                    String body = greedy(i);
                    futures.add(CompletableFuture.supplyAsync(() -> {
                        try {
                            return s.post("/v1/chat/completions", body);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }));
                }
                for (CompletableFuture<HttpResponse<String>> f : futures) {
                    HttpResponse<String> r = f.get();
                    assertEquals(200, r.statusCode(), r.body());
                    together.add(JSON.readTree(r.body()));
                }
            } // hanging up cancels the long stream
            ConcurrencyTest.waitFor(s, "edgelm_requests_processing", 0);
            tokens = ConcurrencyTest.metric(s, "edgelm_tokens_predicted_total");
            steps = ConcurrencyTest.metric(s, "edgelm_decode_steps_total");
        }
        int greedyTokens = 0;
        try (TestServer alone = new TestServer(1, 8, 1024, 0, ServerOptions.loopback(0))) {
            for (int i = 0; i < N; i++) {
                HttpResponse<String> r = alone.post("/v1/chat/completions", greedy(i));
                assertEquals(200, r.statusCode(), r.body());
                JsonNode a = JSON.readTree(r.body());
                JsonNode t = together.get(i);
                assertEquals(ids(a), ids(t), "request " + i + ": the tokens of the request served alone");
                assertEquals(a.get("choices").get(0).get("message").get("content").asText(),
                        t.get("choices").get(0).get("message").get("content").asText());
                assertEquals(a.get("choices").get(0).get("finish_reason").asText(), t.get("choices").get(0).get("finish_reason").asText());
                greedyTokens += t.get("usage").get("completion_tokens").asInt();
            }
        }
        // every decode step of a greedy request also decoded the long stream: at least that many tokens shared a step
        assertTrue(tokens - steps >= greedyTokens, tokens + " tokens in " + steps + " steps; greedy tokens " + greedyTokens);
    }
}
