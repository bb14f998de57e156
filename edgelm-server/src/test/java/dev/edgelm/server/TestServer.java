package dev.edgelm.server;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.template.ChatFormat;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The tiny-chat model served on a free loopback port. */
public final class TestServer implements AutoCloseable {
    public static final String MODEL_ID = "tiny-chat";
    final EdgeLmServer server;
    final BatchBackend backend;
    public final String base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** The prefix cache's budget of a test server. */
    static final long CACHE_BYTES = 64L << 20;

    public TestServer(int parallel, int queue, int ctx, ServerOptions options) {
        this(parallel, queue, ctx, CACHE_BYTES, options);
    }

    public TestServer(int parallel, int queue, int ctx, long cacheBytes, ServerOptions options) {
        server = EdgeLmServer.start(options);
        Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1).withMaxNumTokens(ctx));
        backend = new BatchBackend(engine, parallel, queue, cacheBytes);
        server.serve(new ServedModel(MODEL_ID, engine, ChatFormat.load(TinyChat.DIR), backend));
        base = "http://127.0.0.1:" + server.port();
    }

    public TestServer(int parallel, int queue) {
        this(parallel, queue, 1024, ServerOptions.loopback(0));
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        server.stop();
    }
}
