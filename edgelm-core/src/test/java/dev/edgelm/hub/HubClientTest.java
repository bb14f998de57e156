package dev.edgelm.hub;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HubClientTest {
    static final HubRepoId REPO = HubRepoId.parse("test/tiny-a").orElseThrow();

    @TempDir
    Path cache;
    FakeHub hub;
    ByteArrayOutputStream log;

    @BeforeEach
    void start() throws Exception {
        hub = new FakeHub();
        log = new ByteArrayOutputStream();
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    HubClient client(String token) {
        return new HubClient(hub.endpoint(), token, cache, new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    Path snapshot() {
        return cache.resolve("models--test--tiny-a/snapshots/" + FakeHub.COMMIT);
    }

    void assertSameAsServed(Path folder) throws Exception {
        for (String name : List.of("config.json", "model.safetensors", "generation_config.json")) {
            assertArrayEquals(hub.files.get(name), Files.readAllBytes(folder.resolve(name)), name);
        }
        try (Stream<Path> left = Files.list(folder)) {
            assertEquals(List.of("config.json", "generation_config.json", "model.safetensors"),
                    left.map(p -> p.getFileName().toString()).sorted().toList(), "nothing else, no .part files");
        }
    }

    @Test
    void downloadsTheNeededFilesIntoTheCacheAndLoadsThem() throws Exception {
        Path folder = client(null).download(REPO);
        assertEquals(snapshot(), folder);
        assertSameAsServed(folder);
        assertEquals(FakeHub.COMMIT, Files.readString(cache.resolve("models--test--tiny-a/refs/main")));
        assertTrue(hub.requestsTo("/test/tiny-a/resolve/" + FakeHub.COMMIT + "/README.md").isEmpty());
        assertEquals(1, hub.requestsTo("/cdn/model.safetensors").size(), "LFS file fetched through the redirect");
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("model.safetensors: done, "), "progress bar shown");
        assertNull(hub.requests.get(0).authorization());

        try (Engine engine = Engine.load(folder, EngineOptions.defaults().withThreads(1))) {
            GenerationOptions o = engine.defaultGenerationOptions().build();
            assertEquals(0.7f, o.temperature());
            assertEquals(20, o.topK());
            assertArrayEquals(new int[] {500, 501}, o.stopTokenIds());
            assertEquals(512, engine.config().vocabSize());
        }

        // a second run finds everything in place: only the listing is requested
        int before = hub.requests.size();
        assertEquals(folder, client(null).download(REPO));
        assertEquals(before + 1, hub.requests.size());
    }

    @Test
    void resumesAfterTheConnectionDrops() throws Exception {
        hub.dropAfter = 700_000;
        Path folder = client(null).download(REPO);
        assertSameAsServed(folder);
        List<FakeHub.Request> gets = hub.requestsTo("/cdn/model.safetensors");
        assertEquals(2, gets.size());
        assertNull(gets.get(0).range());
        // the client resumes from what reached its disk: up to the 700,000 bytes sent before the drop
        // (bytes still in flight when the connection is reset are lost, so it can be fewer)
        String range = gets.get(1).range();
        assertTrue(range != null && range.matches("bytes=\\d+-"), range);
        long resumedAt = Long.parseLong(range.substring(6, range.length() - 1));
        assertTrue(resumedAt > 0 && resumedAt <= 700_000, range);
        // the Range header went through the redirect too
        assertEquals(range, hub.requestsTo("/test/tiny-a/resolve/" + FakeHub.COMMIT + "/model.safetensors").get(1).range());
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("resuming"));
    }

    @Test
    void resumesAnInterruptedEarlierDownload() throws Exception {
        Files.createDirectories(snapshot());
        byte[] model = hub.files.get("model.safetensors");
        Files.write(snapshot().resolve("model.safetensors.part"), Arrays.copyOf(model, 1000));
        assertSameAsServed(client(null).download(REPO));
        List<FakeHub.Request> gets = hub.requestsTo("/cdn/model.safetensors");
        assertEquals(1, gets.size());
        assertEquals("bytes=1000-", gets.get(0).range());
    }

    @Test
    void aCorruptDownloadIsDetectedAndFetchedAgain() throws Exception {
        hub.corrupt.set(1);
        assertSameAsServed(client(null).download(REPO));
        assertEquals(2, hub.requestsTo("/cdn/model.safetensors").size());
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("sha256"), log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aFileCorruptTwiceIsAClearError() {
        hub.corrupt.set(2);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> client(null).download(REPO));
        assertTrue(e.getMessage().contains("model.safetensors") && e.getMessage().contains("corrupt")
                && e.getMessage().contains("sha256"), e.getMessage());
        assertFalse(Files.exists(snapshot().resolve("model.safetensors")));
        assertFalse(Files.exists(snapshot().resolve("model.safetensors.part")));
        assertFalse(Files.exists(cache.resolve("models--test--tiny-a/refs/main")), "an incomplete snapshot has no ref");
    }

    @Test
    void theTokenGoesToTheHubButNotToOtherHosts() throws Exception {
        assumeTrue(Arrays.stream(InetAddress.getAllByName("localhost")).allMatch(a -> a.getHostAddress().equals("127.0.0.1")),
                "localhost must be 127.0.0.1 only to act as a second host");
        hub.cdnHost = "localhost";
        client("hf_secret").download(REPO);
        assertEquals("Bearer hf_secret", hub.requestsTo("/api/models/").get(0).authorization());
        assertEquals("Bearer hf_secret", hub.requestsTo("/test/tiny-a/resolve/").get(0).authorization());
        assertNull(hub.requestsTo("/cdn/model.safetensors").get(0).authorization(), "no token on a redirect to another host");
    }

    @Test
    void theTokenComesFromTheEnvironment() throws Exception {
        HubClient fromEnv = HubClient.fromEnvironment(Map.of("HF_TOKEN", "hf_env", "HF_ENDPOINT", hub.endpoint().toString(),
                "EDGELM_CACHE", cache.toString()), null);
        Path folder = fromEnv.download(REPO);
        assertEquals(cache.resolve("hub/models--test--tiny-a/snapshots/" + FakeHub.COMMIT), folder);
        assertTrue(hub.requests.stream().filter(r -> !r.path().startsWith("/cdn/"))
                .allMatch(r -> "Bearer hf_env".equals(r.authorization())));
    }

    @Test
    void unknownModelsAndRefusalsAreClearErrors() {
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> client(null).download(HubRepoId.parse("test/nothing-here").orElseThrow()));
        assertTrue(e.getMessage().contains("test/nothing-here not found"), e.getMessage());

        hub.apiStatus = 401;
        e = assertThrows(EdgeLmException.class, () -> client(null).download(REPO));
        assertTrue(e.getMessage().contains("401") && e.getMessage().contains("set HF_TOKEN"), e.getMessage());

        hub.apiStatus = 403;
        hub.apiErrorCode = "GatedRepo";
        e = assertThrows(EdgeLmException.class, () -> client("hf_wrong").download(REPO));
        assertTrue(e.getMessage().contains("gated") && e.getMessage().contains("HF_TOKEN"), e.getMessage());

        hub.apiStatus = 404;
        hub.apiErrorCode = "RevisionNotFound";
        e = assertThrows(EdgeLmException.class, () -> client(null).download(HubRepoId.parse("test/tiny-a@v9").orElseThrow()));
        assertTrue(e.getMessage().contains("revision 'v9'"), e.getMessage());
    }

    @Test
    void withoutNetworkTheCachedSnapshotIsUsed() throws Exception {
        Path folder = client(null).download(REPO);
        hub.close();
        assertEquals(folder, client(null).download(REPO));
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("using the cached"));
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> client(null).download(HubRepoId.parse("test/other").orElseThrow()));
        assertTrue(e.getMessage().startsWith("cannot reach the Hugging Face Hub at http://127.0.0.1:"), e.getMessage());
    }

    @Test
    void modelReferencesPreferLocalPaths() throws Exception {
        assertEquals(FakeHub.TINY_A, ModelReference.resolve(FakeHub.TINY_A.toString(), () -> {
            throw new AssertionError("no Hub for a local folder");
        }));
        assertEquals(snapshot(), ModelReference.resolve("test/tiny-a", () -> client(null)));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ModelReference.resolve("no/such-model", () -> client(null)));
        assertTrue(e.getMessage().startsWith("'no/such-model' is not a local file or folder"), e.getMessage());
        e = assertThrows(EdgeLmException.class, () -> ModelReference.resolve("./missing", () -> client(null)));
        assertTrue(e.getMessage().contains("no such file or folder"), e.getMessage());
    }

    @Test
    void repoIds() {
        assertEquals(new HubRepoId("Qwen", "Qwen3.5-0.8B", "main"), HubRepoId.parse("Qwen/Qwen3.5-0.8B").orElseThrow());
        assertEquals("refs/pr/1", HubRepoId.parse("Qwen/Qwen3.5-0.8B@refs/pr/1").orElseThrow().revision());
        assertTrue(HubRepoId.parse("just-a-name").isEmpty());
        assertTrue(HubRepoId.parse("a/b/c").isEmpty());
        assertTrue(HubRepoId.parse("../x").isEmpty());
        assertTrue(HubRepoId.parse("owner/name@").isEmpty());
        assertTrue(HubClient.isNeeded("model-00001-of-00002.safetensors"));
        assertTrue(HubClient.isNeeded("model.safetensors.index.json"));
        assertTrue(HubClient.isNeeded("chat_template.jinja"));
        assertFalse(HubClient.isNeeded("README.md"));
        assertFalse(HubClient.isNeeded("onnx/model.safetensors"));
    }
}
