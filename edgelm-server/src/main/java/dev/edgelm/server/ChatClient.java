package dev.edgelm.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.util.EdgeLmException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A small streaming client of an OpenAI-compatible server ({@code edgelm serve}, llama-server): posts a chat
 * completion with {@code stream: true} and hands the content and reasoning pieces over as they arrive, timing
 * the first token. For {@code edgelm run --server} and {@code edgelm bench-serve}; the JDK's HTTP client is
 * enough for this (a full SDK is not needed to read one SSE stream).
 */
public final class ChatClient {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final URI endpoint;
    private final String apiKey;
    private volatile java.io.InputStream current;
    private volatile boolean cancelled;

    /** What one request gave. Times are in seconds from sending the request. */
    public record Result(String content, String reasoning, String finishReason, int promptTokens, int cachedTokens,
                         int completionTokens, double firstTokenSeconds, double totalSeconds) {}

    /** @param baseUrl the server, e.g. {@code http://127.0.0.1:8431} (a trailing {@code /v1} is accepted) */
    public ChatClient(String baseUrl, String apiKey) {
        String b = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        if (b.endsWith("/v1")) {
            b = b.substring(0, b.length() - 3);
        }
        try {
            this.endpoint = URI.create(b + "/v1/chat/completions");
        } catch (IllegalArgumentException e) {
            throw new EdgeLmException("not a server URL: " + baseUrl);
        }
        if (endpoint.getScheme() == null || !endpoint.getScheme().startsWith("http")) {
            throw new EdgeLmException("not an http(s) server URL: " + baseUrl);
        }
        this.apiKey = apiKey;
    }

    /**
     * Stops the chat under way (any thread, e.g. a Ctrl+C handler): the stream is closed, so the server stops
     * generating within a token, and {@link #chat} returns what came so far with the finish reason
     * {@code "cancelled"}.
     */
    public void cancel() {
        cancelled = true;
        java.io.InputStream in = current;
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                // closing is all we wanted
            }
        }
    }

    /**
     * Streams one chat completion. {@code request} is the body without {@code stream}; usage is asked for.
     * Fails with an {@link EdgeLmException} carrying the server's error message.
     */
    public Result chat(ObjectNode request, Consumer<String> onContent, Consumer<String> onReasoning) {
        ObjectNode body = request.deepCopy();
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        HttpRequest.Builder rb = HttpRequest.newBuilder(endpoint).timeout(Duration.ofHours(1))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body)));
        if (apiKey != null) {
            rb.header("Authorization", "Bearer " + apiKey);
        }
        long start = System.nanoTime();
        cancelled = false;
        HttpResponse<java.io.InputStream> response;
        try {
            response = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (ConnectException e) {
            throw new EdgeLmException("cannot connect to " + endpoint + ": is 'edgelm serve' running there?");
        } catch (IOException e) {
            throw new EdgeLmException(endpoint + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EdgeLmException("interrupted");
        }
        StringBuilder content = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        String finish = null;
        int prompt = 0;
        int cached = 0;
        int completion = 0;
        long first = 0;
        current = response.body();
        if (cancelled) {
            cancel();
        }
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            if (response.statusCode() != 200) {
                String text = in.lines().reduce("", (a, b) -> a + b);
                throw new EdgeLmException("the server answered " + response.statusCode() + ": " + errorMessage(text));
            }
            String line;
            while (!cancelled && (line = in.readLine()) != null) {
                if (!line.startsWith("data: ")) {
                    continue;
                }
                String data = line.substring(6);
                if (data.equals("[DONE]")) {
                    break;
                }
                JsonNode chunk = Json.MAPPER.readTree(data);
                if (chunk.has("error")) {
                    throw new EdgeLmException("the server failed: " + chunk.get("error").path("message").asText());
                }
                if (chunk.has("usage") && chunk.get("usage").isObject()) {
                    JsonNode u = chunk.get("usage");
                    prompt = u.path("prompt_tokens").asInt();
                    completion = u.path("completion_tokens").asInt();
                    cached = u.path("prompt_tokens_details").path("cached_tokens").asInt();
                }
                JsonNode choice = chunk.path("choices").path(0);
                if (choice.isMissingNode()) {
                    continue;
                }
                JsonNode delta = choice.path("delta");
                String c = delta.path("content").isTextual() ? delta.get("content").asText() : null;
                String r = delta.path("reasoning_content").isTextual() ? delta.get("reasoning_content").asText() : null;
                if ((c != null && !c.isEmpty()) || (r != null && !r.isEmpty()) || delta.has("tool_calls")) {
                    if (first == 0) {
                        first = System.nanoTime();
                    }
                }
                if (c != null) {
                    content.append(c);
                    onContent.accept(c);
                }
                if (r != null) {
                    reasoning.append(r);
                    onReasoning.accept(r);
                }
                if (choice.path("finish_reason").isTextual()) {
                    finish = choice.get("finish_reason").asText();
                }
            }
        } catch (IOException e) {
            if (!cancelled) {
                throw new EdgeLmException(endpoint + ": the stream broke: " + e.getMessage());
            }
            finish = "cancelled";
        } finally {
            current = null;
        }
        if (cancelled) {
            finish = "cancelled";
        }
        long end = System.nanoTime();
        return new Result(content.toString(), reasoning.toString(), finish, prompt, cached, completion,
                ((first == 0 ? end : first) - start) / 1e9, (end - start) / 1e9);
    }

    private static String errorMessage(String body) {
        try {
            JsonNode e = Json.MAPPER.readTree(body).path("error");
            return e.path("message").isTextual() ? e.get("message").asText() : body;
        } catch (IOException e) {
            return body;
        }
    }
}
