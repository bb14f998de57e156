package dev.edgelm.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.util.EdgeLmException;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URL;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A small streaming client of an OpenAI-compatible server ({@code edgelm serve}, llama-server): posts a chat
 * completion with {@code stream: true} and hands the content and reasoning pieces over as they arrive, timing
 * the first token. For {@code edgelm run --server} and {@code edgelm bench-serve}. It speaks through the JDK's
 * {@link HttpURLConnection} rather than {@code java.net.http.HttpClient} or an SDK: one SSE stream needs no
 * more, and a fresh {@code edgelm run --server} process reaches its request sooner (the {@code HttpClient}
 * loads and initialises the TLS stack and its asynchronous machinery even for {@code http://}, a few hundred
 * milliseconds of a one-shot prompt's first token on a fresh JVM). Safe to use from several threads at once:
 * each {@link #chat} keeps its own state, and {@link #cancel} (from any thread) stops every chat under way.
 */
public final class ChatClient {
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private final URL endpoint;
    private final String server;
    private final String apiKey;
    /** The chats under way, for {@link #cancel}. */
    private final Set<Call> calls = ConcurrentHashMap.newKeySet();

    /**
     * One chat: whether it was cancelled and the virtual thread that reads its stream. {@link #cancel} and the end
     * of the chat hold its lock, so that no interrupt of a cancel arrives once the chat has let its reader go.
     */
    private static final class Call {
        private volatile boolean cancelled;
        private Thread reader;

        synchronized void cancel() {
            cancelled = true;
            if (reader != null) {
                // the stream's close() waits for a read under way; interrupting the virtual thread that reads closes
                // its socket at once (blocking socket I/O of a virtual thread is interruptible)
                reader.interrupt();
            }
        }

        synchronized void reader(Thread t) {
            reader = t;
        }
    }

    /**
     * What one request gave. Times are in seconds from sending the request: {@code firstTokenSeconds} at the
     * first chunk with text or a tool call. {@code server} holds the server's own {@code timings} of the request
     * (null when it sent none), e.g. EdgeLM's {@code first_token_ms} from the request's arrival to its first
     * sampled token, which a model whose first tokens have no text cannot show on the client.
     */
    public record Result(String content, String reasoning, String finishReason, int promptTokens, int cachedTokens,
                         int completionTokens, double firstTokenSeconds, double totalSeconds, JsonNode server) {
        /** The server's {@code timings.NAME} in milliseconds, or -1 when it did not send it. */
        public double serverMillis(String name) {
            return server != null && server.path(name).isNumber() ? server.get(name).asDouble() : -1;
        }
    }

    /** @param baseUrl the server, e.g. {@code http://127.0.0.1:8431} (a trailing {@code /v1} is accepted) */
    public ChatClient(String baseUrl, String apiKey) {
        String b = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        if (b.endsWith("/v1")) {
            b = b.substring(0, b.length() - 3);
        }
        URI uri;
        try {
            uri = URI.create(b + "/v1/chat/completions");
        } catch (IllegalArgumentException e) {
            throw new EdgeLmException("not a server URL: " + baseUrl);
        }
        if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null) {
            throw new EdgeLmException("not an http(s) server URL: " + baseUrl);
        }
        try {
            this.endpoint = uri.toURL();
        } catch (java.net.MalformedURLException | IllegalArgumentException e) {
            throw new EdgeLmException("not a server URL: " + baseUrl);
        }
        this.server = baseUrl;
        this.apiKey = apiKey;
    }

    /**
     * Stops the chats under way (any thread, e.g. a Ctrl+C handler): their streams are closed, so the server stops
     * generating within a token, and each {@link #chat} returns what came so far with the finish reason
     * {@code "cancelled"}. A chat that starts after this call is not affected.
     */
    public void cancel() {
        for (Call c : calls) {
            c.cancel();
        }
    }

    /**
     * Streams one chat completion. {@code request} is the body without {@code stream}; usage is asked for.
     * Fails with an {@link EdgeLmException} carrying the server's error message.
     */
    public Result chat(ObjectNode request, Consumer<String> onContent, Consumer<String> onReasoning) {
        Call call = new Call();
        calls.add(call);
        try {
            if (Thread.currentThread().isVirtual()) {
                call.reader(Thread.currentThread());
                try {
                    return stream(call, request, onContent, onReasoning);
                } finally {
                    call.reader(null); // from here on no cancel() interrupts this thread
                    if (call.cancelled) {
                        Thread.interrupted(); // the interrupt was cancel()'s, not the caller's
                    }
                }
            }
            // on a virtual thread of its own, so that cancel() can break a blocked read (see there)
            Result[] result = new Result[1];
            RuntimeException[] failure = new RuntimeException[1];
            Thread t = Thread.ofVirtual().name("edgelm-chat-client").unstarted(() -> {
                try {
                    result[0] = stream(call, request, onContent, onReasoning);
                } catch (RuntimeException e) {
                    failure[0] = e;
                }
            });
            call.reader(t);
            t.start();
            boolean interrupted = false;
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                    call.cancel();
                }
            }
            call.reader(null);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (failure[0] != null) {
                throw failure[0];
            }
            return result[0];
        } finally {
            calls.remove(call);
        }
    }

    private Result stream(Call call, ObjectNode request, Consumer<String> onContent, Consumer<String> onReasoning) {
        ObjectNode body = request.deepCopy();
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        byte[] bytes = write(body);
        long start = System.nanoTime();
        if (call.cancelled) {
            return new Result("", "", "cancelled", 0, 0, 0, 0, 0, null);
        }
        HttpURLConnection connection;
        int status;
        boolean connected = false;
        try {
            connection = (HttpURLConnection) endpoint.openConnection();
            connection.setConnectTimeout(CONNECT_TIMEOUT_MS);
            connection.setReadTimeout(0); // a reply may take long; the server pings every 30 s while it has nothing
            connection.setRequestMethod("POST");
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(bytes.length);
            connection.setRequestProperty("Content-Type", "application/json");
            connection.setRequestProperty("Accept", "text/event-stream");
            if (apiKey != null) {
                connection.setRequestProperty("Authorization", "Bearer " + apiKey);
            }
            connection.connect();
            connected = true;
            try (OutputStream out = connection.getOutputStream()) {
                out.write(bytes);
            }
            status = connection.getResponseCode();
        } catch (IOException e) {
            if (call.cancelled) {
                return new Result("", "", "cancelled", 0, 0, 0, 0, (System.nanoTime() - start) / 1e9, null);
            }
            if (!connected) {
                throw new EdgeLmException("cannot connect to " + server + ": " + whyUnreachable(e));
            }
            throw new EdgeLmException(server + ": the request failed: " + describe(e));
        }
        StringBuilder content = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        String finish = null;
        int prompt = 0;
        int cached = 0;
        int completion = 0;
        long first = 0;
        JsonNode timings = null;
        InputStream stream;
        try {
            stream = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        } catch (IOException e) {
            throw new EdgeLmException(endpoint + ": " + e.getMessage());
        }
        if (stream == null) {
            throw new EdgeLmException("the server answered " + status + " with no body");
        }
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            if (status != 200) {
                String text = in.lines().reduce("", (a, b) -> a + b);
                throw new EdgeLmException("the server answered " + status + ": " + errorMessage(text));
            }
            String line;
            while (!call.cancelled && (line = in.readLine()) != null) {
                if (!line.startsWith("data: ")) {
                    continue;
                }
                String data = line.substring(6);
                if (data.equals("[DONE]")) {
                    break;
                }
                JsonNode chunk = read(data);
                if (chunk.has("error")) {
                    throw new EdgeLmException("the server failed: " + chunk.get("error").path("message").asText());
                }
                if (chunk.has("usage") && chunk.get("usage").isObject()) {
                    JsonNode u = chunk.get("usage");
                    prompt = u.path("prompt_tokens").asInt();
                    completion = u.path("completion_tokens").asInt();
                    cached = u.path("prompt_tokens_details").path("cached_tokens").asInt();
                }
                if (chunk.path("timings").isObject()) {
                    timings = chunk.get("timings");
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
            if (!call.cancelled) {
                throw new EdgeLmException(endpoint + ": the stream broke: " + e.getMessage());
            }
            finish = "cancelled";
        } finally {
            if (call.cancelled) {
                connection.disconnect(); // a stream left unread cannot go back to the keep-alive pool
            }
        }
        if (call.cancelled) {
            finish = "cancelled";
        }
        long end = System.nanoTime();
        return new Result(content.toString(), reasoning.toString(), finish, prompt, cached, completion,
                ((first == 0 ? end : first) - start) / 1e9, (end - start) / 1e9, timings);
    }

    /** Why a connection to the server could not be made, in words (the exception's own message is often a bare host). */
    private String whyUnreachable(IOException e) {
        if (e instanceof UnknownHostException) {
            return "unknown host '" + endpoint.getHost() + "' (no such name, or no name service reachable)";
        }
        if (e instanceof NoRouteToHostException) {
            return "no route to host " + endpoint.getHost();
        }
        if (e instanceof SocketTimeoutException) {
            return "no answer within " + CONNECT_TIMEOUT_MS / 1000 + " s (connection timed out)";
        }
        if (e instanceof ConnectException) {
            String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(java.util.Locale.ROOT);
            return (m.contains("refused") ? "connection refused" : describe(e)) + " (is 'edgelm serve' running there?)";
        }
        return describe(e);
    }

    private static String describe(IOException e) {
        return e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
    }

    // The request and the chunks go through jackson-core's streaming parser and generator and the tree classes,
    // not an ObjectMapper: setting one up (serializer and deserializer factories, introspection) is about 0.3 s
    // of a fresh `edgelm run --server` process, more than the rest of its JSON work together.
    private static final JsonFactory FACTORY = new JsonFactory();

    static byte[] write(JsonNode node) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            write(g, node);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void write(JsonGenerator g, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (var field : node.properties()) {
                    g.writeFieldName(field.getKey());
                    write(g, field.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode e : node) {
                    write(g, e);
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(node.textValue());
            case BOOLEAN -> g.writeBoolean(node.booleanValue());
            case NUMBER -> {
                if (node.isIntegralNumber()) {
                    g.writeNumber(node.bigIntegerValue());
                } else if (node.isFloat() || node.isDouble()) {
                    // the shortest decimal of the float or double (Float.toString / Double.toString): 0.7f goes out
                    // as 0.7, not as the widened double's 0.699999988079071; JSON has no NaN or infinity
                    double d = node.doubleValue();
                    if (!Double.isFinite(d)) {
                        throw new EdgeLmException("cannot send " + d + " in JSON: not a finite number");
                    }
                    g.writeNumber(node.isFloat() ? Float.toString(node.floatValue()) : Double.toString(d));
                } else {
                    g.writeNumber(node.decimalValue());
                }
            }
            default -> g.writeNull();
        }
    }

    static JsonNode read(String text) throws IOException {
        try (JsonParser p = FACTORY.createParser(text)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new IOException("no JSON in " + text);
            }
            return read(p, t);
        }
    }

    private static JsonNode read(JsonParser p, JsonToken t) throws IOException {
        JsonNodeFactory f = JsonNodeFactory.instance;
        return switch (t) {
            case START_OBJECT -> {
                ObjectNode o = f.objectNode();
                for (JsonToken k = p.nextToken(); k == JsonToken.FIELD_NAME; k = p.nextToken()) {
                    String name = p.currentName();
                    o.set(name, read(p, p.nextToken()));
                }
                yield o;
            }
            case START_ARRAY -> {
                com.fasterxml.jackson.databind.node.ArrayNode a = f.arrayNode();
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    a.add(read(p, e));
                }
                yield a;
            }
            case VALUE_STRING -> f.textNode(p.getText());
            case VALUE_NUMBER_INT -> switch (p.getNumberType()) {
                case INT -> f.numberNode(p.getIntValue());
                case LONG -> f.numberNode(p.getLongValue());
                default -> f.numberNode(p.getBigIntegerValue());
            };
            case VALUE_NUMBER_FLOAT -> f.numberNode(p.getDoubleValue());
            case VALUE_TRUE -> f.booleanNode(true);
            case VALUE_FALSE -> f.booleanNode(false);
            case VALUE_NULL -> f.nullNode();
            default -> throw new IOException("unexpected " + t + " in a JSON chunk");
        };
    }

    private static String errorMessage(String body) {
        try {
            JsonNode e = read(body).path("error");
            return e.path("message").isTextual() ? e.get("message").asText() : body;
        } catch (IOException e) {
            return body;
        }
    }
}
