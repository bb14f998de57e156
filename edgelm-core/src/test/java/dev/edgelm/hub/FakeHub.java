package dev.edgelm.hub;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local stand-in for the Hub serving one repository: by default {@code test/tiny-a}, made of the tiny-a fixture
 * plus a generation config and files a runtime must skip ({@link #serving} serves another folder). LFS files are
 * served through a redirect to {@code /cdn/}, as the Hub does; the listing carries sizes, LFS sha256 sums and git
 * blob ids computed here with the JDK's digests.
 */
public final class FakeHub implements AutoCloseable {
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    public static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";
    static final String GENERATION_CONFIG = "{\"do_sample\": true, \"temperature\": 0.7, \"top_k\": 20, \"eos_token_id\": [500, 501]}";

    record Request(String path, String authorization, String range) {}

    final String repo;
    final HttpServer server;
    final Map<String, byte[]> files = new LinkedHashMap<>();
    final List<String> lfs = List.of("model.safetensors");
    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    /** Drop the connection after this many bytes of the next model.safetensors body (once). */
    volatile long dropAfter = -1;
    /** Serve model.safetensors with one byte flipped this many more times. */
    final AtomicInteger corrupt = new AtomicInteger();
    /** When not 200: the status of the listing, with this X-Error-Code. */
    volatile int apiStatus = 200;
    volatile String apiErrorCode;
    /** Host name used in absolute redirects to the CDN, or null for a relative redirect. */
    volatile String cdnHost;
    /** When set: the Location of the redirect to the CDN, verbatim. */
    public volatile String cdnLocation;
    /** Answer 416 to every request for model.safetensors, whatever its range. */
    public volatile boolean always416;
    /** Stop sending model.safetensors after this many bytes, keeping the connection open (until closed). */
    public volatile long stallAfter = -1;
    /** Append this many junk bytes to model.safetensors (the Content-Length counts them). */
    volatile int extraBytes;
    private final java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
    private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);

    FakeHub() throws IOException {
        this("test/tiny-a", Map.of(
                "config.json", Files.readAllBytes(TINY_A.resolve("config.json")),
                "model.safetensors", Files.readAllBytes(TINY_A.resolve("model.safetensors")),
                "generation_config.json", GENERATION_CONFIG.getBytes(StandardCharsets.UTF_8),
                "README.md", "# tiny-a\n".getBytes(StandardCharsets.UTF_8),
                "onnx/model.onnx", new byte[100]));
    }

    private FakeHub(String repo, Map<String, byte[]> content) throws IOException {
        this.repo = repo;
        content.keySet().stream().sorted().forEach(name -> files.put(name, content.get(name)));
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(executor); // one thread per exchange: a stalled body must not hold up the next request
        server.start();
    }

    /** Serves the files at the top of {@code folder} as repository {@code repo} at commit {@link #COMMIT}. */
    public static FakeHub serving(String repo, Path folder) throws IOException {
        Map<String, byte[]> content = new LinkedHashMap<>();
        try (var list = Files.list(folder)) {
            for (Path p : list.filter(Files::isRegularFile).toList()) {
                content.put(p.getFileName().toString(), Files.readAllBytes(p));
            }
        }
        return new FakeHub(repo, content);
    }

    /** Requests received so far whose path starts with {@code prefix}. */
    public int requestCount(String prefix) {
        return requestsTo(prefix).size();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    List<Request> requestsTo(String pathPrefix) {
        synchronized (requests) {
            return requests.stream().filter(r -> r.path().startsWith(pathPrefix)).toList();
        }
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getRawPath();
        requests.add(new Request(path, ex.getRequestHeaders().getFirst("Authorization"), ex.getRequestHeaders().getFirst("Range")));
        try (ex) {
            if (path.startsWith("/api/models/")) {
                listing(ex, path);
            } else if (path.startsWith("/" + repo + "/resolve/" + COMMIT + "/")) {
                String name = path.substring(("/" + repo + "/resolve/" + COMMIT + "/").length());
                if (lfs.contains(name)) {
                    String host = cdnHost;
                    String location = host == null ? "/cdn/" + name : "http://" + host + ":" + server.getAddress().getPort() + "/cdn/" + name;
                    if (cdnLocation != null) {
                        location = cdnLocation;
                    }
                    ex.getResponseHeaders().add("Location", location);
                    ex.sendResponseHeaders(302, -1);
                } else {
                    serve(ex, name);
                }
            } else if (path.startsWith("/cdn/")) {
                serve(ex, path.substring("/cdn/".length()));
            } else {
                ex.sendResponseHeaders(404, -1);
            }
        }
    }

    private void listing(HttpExchange ex, String path) throws IOException {
        if (apiStatus != 200) {
            if (apiErrorCode != null) {
                ex.getResponseHeaders().add("X-Error-Code", apiErrorCode);
            }
            ex.sendResponseHeaders(apiStatus, -1);
            return;
        }
        if (!path.equals("/api/models/" + repo + "/revision/main") || !"blobs=true".equals(ex.getRequestURI().getQuery())) {
            ex.getResponseHeaders().add("X-Error-Code", "RepoNotFound");
            ex.sendResponseHeaders(404, -1);
            return;
        }
        StringBuilder json = new StringBuilder("{\"id\":\"" + repo + "\",\"sha\":\"" + COMMIT + "\",\"siblings\":[");
        boolean first = true;
        for (Map.Entry<String, byte[]> e : files.entrySet()) {
            byte[] content = e.getValue();
            json.append(first ? "" : ",").append("{\"rfilename\":\"").append(e.getKey()).append("\",\"size\":").append(content.length);
            if (lfs.contains(e.getKey())) {
                json.append(",\"blobId\":\"").append(hex("SHA-1", "0".getBytes())).append("\",\"lfs\":{\"sha256\":\"")
                        .append(hex("SHA-256", content)).append("\",\"size\":").append(content.length).append(",\"pointerSize\":134}");
            } else {
                byte[] header = ("blob " + content.length + "\0").getBytes(StandardCharsets.US_ASCII);
                byte[] blob = new byte[header.length + content.length];
                System.arraycopy(header, 0, blob, 0, header.length);
                System.arraycopy(content, 0, blob, header.length, content.length);
                json.append(",\"blobId\":\"").append(hex("SHA-1", blob)).append("\"");
            }
            json.append("}");
            first = false;
        }
        json.append("]}");
        byte[] body = json.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
    }

    private void serve(HttpExchange ex, String name) throws IOException {
        byte[] content = files.get(name);
        if (content == null) {
            ex.getResponseHeaders().add("X-Error-Code", "EntryNotFound");
            ex.sendResponseHeaders(404, -1);
            return;
        }
        if (name.equals("model.safetensors") && corrupt.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            content = content.clone();
            content[content.length / 2] ^= 0x55;
        }
        if (name.equals("model.safetensors") && always416) {
            ex.sendResponseHeaders(416, -1);
            return;
        }
        if (name.equals("model.safetensors") && extraBytes > 0) {
            content = java.util.Arrays.copyOf(content, content.length + extraBytes);
        }
        if (name.equals("model.safetensors") && stallAfter >= 0 && ex.getRequestHeaders().getFirst("Range") == null) {
            ex.sendResponseHeaders(200, content.length);
            ex.getResponseBody().write(content, 0, (int) stallAfter);
            ex.getResponseBody().flush();
            try {
                closed.await(20, java.util.concurrent.TimeUnit.SECONDS); // bounded: the test ends long before
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("fake hub: stalled on purpose");
        }
        int from = 0;
        String range = ex.getRequestHeaders().getFirst("Range");
        if (range != null && range.matches("bytes=\\d+-")) {
            from = Integer.parseInt(range.substring(6, range.length() - 1));
            if (from >= content.length) {
                ex.sendResponseHeaders(416, -1);
                return;
            }
            ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (content.length - 1) + "/" + content.length);
        }
        int length = content.length - from;
        ex.sendResponseHeaders(range != null ? 206 : 200, length);
        OutputStream out = ex.getResponseBody();
        long drop = dropAfter;
        if (name.equals("model.safetensors") && drop >= 0 && drop < length) {
            dropAfter = -1;
            out.write(content, from, (int) drop);
            out.flush();
            // end the exchange short of its Content-Length: the client sees the connection close mid-body
            throw new IOException("fake hub: connection dropped on purpose");
        }
        out.write(content, from, length);
    }

    static String hex(String algorithm, byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(data));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        closed.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
