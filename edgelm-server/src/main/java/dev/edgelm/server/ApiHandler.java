package dev.edgelm.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.template.ChatTemplateException;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The routes of the OpenAI-compatible API, following llama-server's behaviour: its paths (with and without
 * {@code /v1}), response and chunk shapes, and its error object
 * {@code {"error": {"code", "message", "type"}}} (plus OpenAI's {@code param} naming the field at fault).
 * {@code /health} and {@code /v1/models} are public; every other route needs the API key when one is set.
 * Any failure that is not the client's is a 500 with a short message, never a stack trace.
 */
final class ApiHandler extends Handler.Abstract {
    private static final Logger LOG = Logger.getLogger(ApiHandler.class.getName());
    /** An SSE comment is sent after this long without a chunk (llama-server's --sse-ping-interval default). */
    static final long PING_MILLIS = 30_000;
    static final String FINGERPRINT = "b" + version() + "-edgelm";

    /** The most bytes of a refused body read and dropped so that its 413 reaches the client (see {@link #drain}). */
    private static final long DRAIN_LIMIT = 16L << 20;
    private final ServerOptions options;
    private final Json json;
    private final byte[] keyDigest;
    private final Metrics metrics = new Metrics();
    private volatile ServedModel model;

    ApiHandler(ServerOptions options) {
        this.options = options;
        this.json = new Json(options.maxBodyBytes());
        this.keyDigest = options.apiKey() == null ? null : sha256(options.apiKey().getBytes(StandardCharsets.UTF_8));
    }

    void setModel(ServedModel m) {
        this.model = m;
    }

    ServedModel model() {
        return model;
    }

    Metrics metrics() {
        return metrics;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        String method = request.getMethod();
        String endpoint = endpointName(path);
        try {
            route(path, method, request, response, callback);
        } catch (ApiException e) {
            metrics.request(endpoint, e.status());
            sendError(response, callback, e);
        } catch (Throwable t) {
            metrics.request(endpoint, 500);
            LOG.log(Level.WARNING, "request " + method + " " + path + " failed", t);
            sendError(response, callback, new ApiException(500, "server_error", null, "internal error: " + t.getClass().getSimpleName()));
        }
        return true;
    }

    private void route(String path, String method, Request request, Response response, Callback callback) throws Exception {
        String p = path.startsWith("/v1/") ? path.substring(3) : path;
        switch (p) {
            case "/health" -> {
                expect(method, "GET");
                if (model == null) {
                    throw new ApiException(503, "unavailable_error", null, "Loading model");
                }
                send(response, callback, 200, Json.object().put("status", "ok"));
                metrics.request("health", 200);
                return;
            }
            case "/models" -> {
                expect(method, "GET");
                send(response, callback, 200, models(ready()));
                metrics.request("models", 200);
                return;
            }
            default -> {
                // the rest needs the key
            }
        }
        authorize(request);
        ServedModel m = ready();
        switch (p) {
            case "/chat/completions" -> {
                expect(method, "POST");
                ChatRequest r = ChatRequest.parse(body(request), options.maxMessages());
                run(Generation.chat(m, r).receivedAt(request.getBeginNanoTime()), r.stream(), r.includeUsage(), true, "chat", request, response, callback);
            }
            case "/completions" -> {
                expect(method, "POST");
                completions(m, body(request), request, response, callback);
            }
            case "/tokenize" -> {
                expect(method, "POST");
                send(response, callback, 200, tokenize(m, body(request)));
                metrics.request("tokenize", 200);
            }
            case "/detokenize" -> {
                expect(method, "POST");
                send(response, callback, 200, detokenize(m, body(request)));
                metrics.request("detokenize", 200);
            }
            case "/apply-template" -> {
                expect(method, "POST");
                ChatRequest r = ChatRequest.parse(body(request), options.maxMessages());
                String prompt;
                try {
                    prompt = m.format().template().render(r.messages(), r.parsesToolCalls() ? r.tools() : null, true, r.templateKwargs());
                } catch (ChatTemplateException e) {
                    throw ApiException.invalid("messages", "the chat template cannot render these messages: " + e.getMessage());
                }
                send(response, callback, 200, Json.object().put("prompt", prompt));
                metrics.request("apply-template", 200);
            }
            case "/metrics" -> {
                expect(method, "GET");
                byte[] text = metrics.render(m.backend().stats()).getBytes(StandardCharsets.UTF_8);
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
                Content.Sink.write(response, true, ByteBuffer.wrap(text));
                callback.succeeded();
                metrics.request("metrics", 200);
            }
            case "/props" -> {
                expect(method, "GET");
                ObjectNode o = Json.object();
                o.putObject("default_generation_settings").put("n_ctx", m.contextLength());
                o.put("model_path", m.engine().modelPath().getFileName().toString());
                o.put("chat_template", m.format().template().source());
                o.put("build_info", FINGERPRINT);
                send(response, callback, 200, o);
                metrics.request("props", 200);
            }
            default -> throw new ApiException(404, "not_found_error", null, "File Not Found: " + path);
        }
    }

    private ServedModel ready() {
        ServedModel m = model;
        if (m == null) {
            throw new ApiException(503, "unavailable_error", null, "Loading model");
        }
        return m;
    }

    private static void expect(String method, String wanted) {
        if (!method.equals(wanted)) {
            throw new ApiException(405, "invalid_request_error", null, "method " + method + " not allowed here; use " + wanted);
        }
    }

    /** Bearer-token check; the digests are compared in constant time, so timing tells nothing of the key. */
    private void authorize(Request request) {
        if (keyDigest == null) {
            return;
        }
        String h = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        String given = h != null && h.regionMatches(true, 0, "Bearer ", 0, 7) ? h.substring(7).trim() : null;
        if (given == null || !MessageDigest.isEqual(keyDigest, sha256(given.getBytes(StandardCharsets.UTF_8)))) {
            throw new ApiException(401, "authentication_error", null, "Invalid API Key");
        }
    }

    private ObjectNode body(Request request) throws IOException {
        long declared = request.getLength();
        try (InputStream in = Content.Source.asInputStream(request)) {
            if (declared > options.maxBodyBytes()) {
                // a client that waits for "100 Continue" has sent nothing yet: answer at once, so that it sends
                // nothing (reading would make the server invite the upload of a body it is about to refuse)
                if (!request.getHeaders().contains(HttpHeader.EXPECT, "100-continue")) {
                    drain(in, declared);
                }
                throw tooLarge(declared);
            }
            byte[] bytes = in.readNBytes(options.maxBodyBytes() + 1);
            if (bytes.length > options.maxBodyBytes()) {
                drain(in, -1); // a chunked body: its length is unknown
                throw tooLarge(-1);
            }
            return json.parseObject(bytes);
        }
    }

    /**
     * Reads and drops the rest of a body refused as too large, up to {@link #DRAIN_LIMIT} bytes. A server that closes
     * the connection with unread bytes in its receive buffer makes the kernel answer with a reset, and the client,
     * often still sending, loses the 413 that was already on the wire ("received no bytes"); reading the body first
     * lets the client see the answer. A body declared beyond the bound is left unread, and a body of unknown length
     * ({@code declared < 0}, chunked) is read up to the bound: the connection closes either way.
     */
    private static void drain(InputStream in, long declared) throws IOException {
        if (declared > DRAIN_LIMIT) {
            return;
        }
        byte[] sink = new byte[16 << 10];
        long left = DRAIN_LIMIT;
        for (int n; left > 0 && (n = in.read(sink, 0, (int) Math.min(sink.length, left))) >= 0; ) {
            left -= n;
        }
    }

    private ApiException tooLarge(long declared) {
        return new ApiException(413, "invalid_request_error", null, "the request body is " + (declared >= 0 ? declared + " bytes" : "too large")
                + "; at most " + options.maxBodyBytes() + " bytes are accepted");
    }

    private void completions(ServedModel m, ObjectNode body, Request request, Response response, Callback callback) throws Exception {
        if (Json.bool(body, "echo", "echo", false)) {
            throw ApiException.invalid("echo", "'echo' is not supported");
        }
        if (Json.given(body, "suffix")) {
            throw ApiException.invalid("suffix", "'suffix' is not supported");
        }
        if (Json.given(body, "best_of") && Json.integer(body, "best_of", "best_of", 1, 1) != 1) {
            throw ApiException.invalid("best_of", "'best_of' must be 1");
        }
        Json.integer(body, "n", "n", 1, 1);
        JsonNode prompt = body.get("prompt");
        int[] ids;
        if (prompt == null || prompt.isNull()) {
            throw ApiException.invalid("prompt", "'prompt' is required");
        } else if (prompt.isTextual()) {
            ids = m.tokenizer().encode(prompt.asText());
        } else if (prompt.isArray() && prompt.size() == 1 && prompt.get(0).isTextual()) {
            ids = m.tokenizer().encode(prompt.get(0).asText());
        } else if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isNumber()) {
            ids = tokenIds((ArrayNode) prompt, "prompt", m);
        } else {
            throw ApiException.invalid("prompt", "'prompt' must be a string, an array of one string, or an array of token ids");
        }
        Long lp = Json.integer(body, "logprobs", "logprobs", 0, 20); // the legacy API: an integer
        boolean stream = Json.bool(body, "stream", "stream", false);
        ObjectNode so = Json.objectField(body, "stream_options", "stream_options");
        boolean usage = so != null && Json.bool(so, "include_usage", "stream_options.include_usage", false);
        Generation g = Generation.raw(m, ids, stream, Sampling.parse(body), lp == null ? -1 : lp.intValue()).receivedAt(request.getBeginNanoTime());
        run(g, stream, usage, false, "completions", request, response, callback);
    }

    /** Runs a generation and answers with one JSON object or an SSE stream. */
    private void run(Generation g, boolean stream, boolean includeUsage, boolean chat, String endpoint,
                     Request request, Response response, Callback callback) throws Exception {
        ServedModel m = model;
        try {
            g.start();
        } catch (GenerationBackend.QueueFullException e) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            throw new ApiException(429, "rate_limit_error", null, "the server is busy: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw new ApiException(503, "unavailable_error", null, "the server is shutting down");
        }
        String id = (chat ? "chatcmpl-" : "cmpl-") + Generation.randomId(32);
        long created = System.currentTimeMillis() / 1000;
        if (!stream) {
            request.addFailureListener(t -> g.cancel());
            Generation.End end;
            try {
                end = g.await();
            } catch (InterruptedException e) {
                g.cancel();
                throw e;
            }
            if (end.failure() != null) {
                throw failure(end.failure());
            }
            countCache(g);
            send(response, callback, 200, chat ? chatResponse(g, end.result(), id, created, m) : textResponse(g, end.result(), id, created, m));
            metrics.request(endpoint, 200);
            return;
        }
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        metrics.streamOpened();
        try {
            if (chat) {
                ObjectNode delta = Json.object().put("role", "assistant").putNull("content");
                sse(response, chunk(id, created, m, delta, null, null));
            }
            while (true) {
                Object ev = g.next(PING_MILLIS);
                if (ev == null) {
                    write(response, ": ping\n\n", false); // also finds out whether the client is still there
                } else if (ev instanceof Generation.Part part) {
                    ObjectNode c = chat ? chunk(id, created, m, part.delta() == null ? Json.object() : part.delta(), null, part.logprobs())
                            : textChunk(id, created, m, part.text(), null, part.logprobs());
                    sse(response, c);
                } else if (ev instanceof Generation.End end) {
                    if (end.failure() != null) {
                        ApiException e = failure(end.failure());
                        sse(response, errorBody(e));
                        metrics.request(endpoint, e.status());
                    } else {
                        countCache(g);
                        GenerationResult r = end.result();
                        ObjectNode last = chat ? chunk(id, created, m, Json.object(), g.finishReason(r), null)
                                : textChunk(id, created, m, "", g.finishReason(r), null);
                        last.set("timings", g.timings(r));
                        sse(response, last);
                        if (includeUsage) {
                            ObjectNode u = chat ? chunk(id, created, m, null, null, null) : textChunk(id, created, m, null, null, null);
                            u.putArray("choices");
                            u.set("usage", g.usage(r));
                            sse(response, u);
                        }
                        metrics.request(endpoint, 200);
                    }
                    write(response, "data: [DONE]\n\n", true);
                    callback.succeeded();
                    return;
                }
            }
        } catch (IOException e) {
            // the client went away: stop generating (within a token) and free the slot
            g.cancel();
            metrics.request(endpoint, 499);
            callback.failed(e);
        } finally {
            metrics.streamClosed();
        }
    }

    private void countCache(Generation g) {
        if (g.cachedTokens() > 0) {
            metrics.cacheHit();
        }
    }

    /** A failure inside the generation: a user mistake the engine caught (400), or a server error (500). */
    private static ApiException failure(RuntimeException e) {
        if (e instanceof ApiException a) {
            return a;
        }
        if (e instanceof EdgeLmException) {
            return ApiException.invalid(null, e.getMessage());
        }
        LOG.log(Level.WARNING, "generation failed", e);
        return new ApiException(500, "server_error", null, "internal error: " + e.getClass().getSimpleName());
    }

    private ObjectNode chatResponse(Generation g, GenerationResult r, String id, long created, ServedModel m) {
        ObjectNode o = Json.object();
        o.put("id", id);
        o.put("object", "chat.completion");
        o.put("created", created);
        o.put("model", m.id());
        o.put("system_fingerprint", FINGERPRINT);
        ObjectNode choice = o.putArray("choices").addObject();
        choice.put("index", 0);
        choice.put("finish_reason", g.finishReason(r));
        ObjectNode msg = choice.putObject("message");
        msg.put("role", "assistant");
        if (g.content().isEmpty() && !g.toolCalls().isEmpty()) {
            msg.putNull("content");
        } else {
            msg.put("content", g.content());
        }
        if (!g.reasoning().isEmpty()) {
            msg.put("reasoning_content", g.reasoning());
        }
        if (!g.toolCalls().isEmpty()) {
            ArrayNode calls = msg.putArray("tool_calls");
            for (Generation.ToolCall c : g.toolCalls()) {
                ObjectNode call = calls.addObject().put("id", c.id()).put("type", "function");
                call.putObject("function").put("name", c.name()).put("arguments", c.arguments().toString());
            }
        }
        if (g.logprobs() != null) {
            choice.putObject("logprobs").set("content", g.logprobs());
        } else {
            choice.putNull("logprobs");
        }
        o.set("usage", g.usage(r));
        o.set("timings", g.timings(r));
        return o;
    }

    private ObjectNode textResponse(Generation g, GenerationResult r, String id, long created, ServedModel m) {
        ObjectNode o = Json.object();
        o.put("id", id);
        o.put("object", "text_completion");
        o.put("created", created);
        o.put("model", m.id());
        o.put("system_fingerprint", FINGERPRINT);
        ObjectNode choice = o.putArray("choices").addObject();
        choice.put("text", g.content());
        choice.put("index", 0);
        if (g.logprobs() != null) {
            choice.putObject("logprobs").set("content", g.logprobs());
        } else {
            choice.putNull("logprobs");
        }
        choice.put("finish_reason", g.finishReason(r));
        o.set("usage", g.usage(r));
        o.set("timings", g.timings(r));
        return o;
    }

    private static ObjectNode chunk(String id, long created, ServedModel m, ObjectNode delta, String finish, ArrayNode logprobs) {
        ObjectNode o = Json.object();
        if (delta != null) {
            ObjectNode choice = o.putArray("choices").addObject();
            choice.put("index", 0);
            if (finish == null) {
                choice.putNull("finish_reason");
            } else {
                choice.put("finish_reason", finish);
            }
            choice.set("delta", delta);
            if (logprobs != null) {
                choice.putObject("logprobs").set("content", logprobs);
            }
        }
        o.put("created", created);
        o.put("id", id);
        o.put("model", m.id());
        o.put("system_fingerprint", FINGERPRINT);
        o.put("object", "chat.completion.chunk");
        return o;
    }

    private static ObjectNode textChunk(String id, long created, ServedModel m, String text, String finish, ArrayNode logprobs) {
        ObjectNode o = Json.object();
        if (text != null) {
            ObjectNode choice = o.putArray("choices").addObject();
            choice.put("text", text);
            choice.put("index", 0);
            if (logprobs != null) {
                choice.putObject("logprobs").set("content", logprobs);
            } else {
                choice.putNull("logprobs");
            }
            if (finish == null) {
                choice.putNull("finish_reason");
            } else {
                choice.put("finish_reason", finish);
            }
        }
        o.put("id", id);
        o.put("object", "text_completion");
        o.put("created", created);
        o.put("model", m.id());
        o.put("system_fingerprint", FINGERPRINT);
        return o;
    }

    private static ObjectNode models(ServedModel m) {
        ObjectNode o = Json.object().put("object", "list");
        ObjectNode e = o.putArray("data").addObject();
        e.put("id", m.id());
        e.put("object", "model");
        e.put("created", m.created());
        e.put("owned_by", "edgelm");
        ObjectNode meta = e.putObject("meta");
        meta.put("n_vocab", m.tokenizer().vocabSize());
        meta.put("n_ctx", m.contextLength());
        meta.put("n_embd", m.engine().config().hiddenSize());
        return o;
    }

    private static ObjectNode tokenize(ServedModel m, ObjectNode body) {
        String content = Json.string(body, "content", "content", null);
        if (content == null) {
            throw ApiException.invalid("content", "'content' is required");
        }
        Json.bool(body, "add_special", "add_special", false); // Qwen3.5 adds no BOS: nothing to add
        boolean parseSpecial = Json.bool(body, "parse_special", "parse_special", true);
        boolean pieces = Json.bool(body, "with_pieces", "with_pieces", false);
        int[] ids = m.tokenizer().encode(content, !parseSpecial);
        ObjectNode o = Json.object();
        ArrayNode tokens = o.putArray("tokens");
        for (int id : ids) {
            if (!pieces) {
                tokens.add(id);
                continue;
            }
            ObjectNode t = tokens.addObject().put("id", id);
            String piece = m.pieceOrNull(id);
            if (piece != null) {
                t.put("piece", piece);
            } else {
                ArrayNode b = t.putArray("piece");
                for (byte x : m.bytes(id)) {
                    b.add(x & 0xff);
                }
            }
        }
        return o;
    }

    private static ObjectNode detokenize(ServedModel m, ObjectNode body) {
        ArrayNode arr = Json.arrayField(body, "tokens", "tokens");
        if (arr == null) {
            throw ApiException.invalid("tokens", "'tokens' is required");
        }
        int[] ids = tokenIds(arr, "tokens", m);
        return Json.object().put("content", m.tokenizer().decode(ids, false));
    }

    private static int[] tokenIds(ArrayNode arr, String field, ServedModel m) {
        int[] ids = new int[arr.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = arr.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || !m.tokenizer().hasToken(t.asInt())) {
                throw ApiException.invalid(field, "'" + field + "[" + i + "]' must be a token id (0.." + (m.tokenizer().vocabSize() - 1)
                        + "), got " + t);
            }
            ids[i] = t.asInt();
        }
        return ids;
    }

    private static void sse(Response response, ObjectNode event) throws IOException {
        write(response, "data: " + new String(Json.bytes(event), StandardCharsets.UTF_8) + "\n\n", false);
    }

    private static void write(Response response, String text, boolean last) throws IOException {
        Content.Sink.write(response, last, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static void send(Response response, Callback callback, int status, ObjectNode body) throws IOException {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json; charset=utf-8");
        Content.Sink.write(response, true, ByteBuffer.wrap(Json.bytes(body)));
        callback.succeeded();
    }

    static ObjectNode errorBody(ApiException e) {
        ObjectNode o = Json.object();
        ObjectNode err = o.putObject("error");
        err.put("code", e.status());
        err.put("message", e.getMessage());
        err.put("type", e.type());
        if (e.param() != null) {
            err.put("param", e.param());
        }
        return o;
    }

    private static void sendError(Response response, Callback callback, ApiException e) {
        if (response.isCommitted()) {
            callback.failed(e);
            return;
        }
        try {
            if (e.status() == 401) {
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
            }
            if (e.status() == 413) {
                // a body beyond the drain bound is left unread, so the connection cannot carry another request: say
                // so, or a client that reuses it sends its next request into a socket the server is closing
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            }
            send(response, callback, e.status(), errorBody(e));
        } catch (IOException io) {
            callback.failed(io);
        }
    }

    private static String endpointName(String path) {
        String p = path.startsWith("/v1/") ? path.substring(3) : path;
        return switch (p) {
            case "/chat/completions" -> "chat";
            case "/completions", "/health", "/models", "/tokenize", "/detokenize", "/apply-template", "/metrics", "/props" -> p.substring(1);
            default -> "other";
        };
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String version() {
        String v = ApiHandler.class.getPackage().getImplementationVersion();
        return v == null ? "0" : v;
    }

}
