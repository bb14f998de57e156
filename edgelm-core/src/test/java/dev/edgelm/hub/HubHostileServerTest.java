package dev.edgelm.hub;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A Hub that misbehaves: every download ends, in a bounded number of requests, in the file or a clear error. */
@Timeout(60)
class HubHostileServerTest {
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

    HubClient client() {
        return new HubClient(hub.endpoint(), null, cache, new PrintStream(log, true, StandardCharsets.UTF_8),
                Duration.ofSeconds(1), Duration.ofMillis(1));
    }

    Path snapshot() {
        return cache.resolve("models--test--tiny-a/snapshots/" + FakeHub.COMMIT);
    }

    @Test
    void aServerAnswering416ForeverEndsAfterTheBoundedAttempts() {
        hub.always416 = true;
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> client().download(REPO));
        assertTrue(e.getMessage().contains("gave up after " + HubClient.MAX_ATTEMPTS + " attempts")
                && e.getMessage().contains("416"), e.getMessage());
        assertEquals(HubClient.MAX_ATTEMPTS, hub.requestCount("/cdn/model.safetensors"));
        assertFalse(Files.exists(snapshot().resolve("model.safetensors")));
    }

    @Test
    void aStalledBodyTimesOutAndTheDownloadResumes() throws Exception {
        hub.stallAfter = 5000;
        Path folder = client().download(REPO);
        assertArrayEquals(hub.files.get("model.safetensors"), Files.readAllBytes(folder.resolve("model.safetensors")));
        List<FakeHub.Request> gets = hub.requestsTo("/cdn/model.safetensors");
        assertEquals(2, gets.size());
        assertNull(gets.get(0).range());
        assertEquals("bytes=5000-", gets.get(1).range(), "resumed from what arrived before the stall");
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("no data for 1 s"), log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aBodyLargerThanListedStopsAtTheListedSize() throws Exception {
        hub.extraBytes = 3_000_000;
        Path folder = client().download(REPO);
        assertArrayEquals(hub.files.get("model.safetensors"), Files.readAllBytes(folder.resolve("model.safetensors")));
        assertEquals(1, hub.requestCount("/cdn/model.safetensors"), "not downloaded again");
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("sent more than the"), log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void redirectsToOtherSchemesOrUnparsableLocationsAreClearErrors() {
        hub.cdnLocation = "ftp://127.0.0.1/model.safetensors";
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> client().download(REPO));
        assertTrue(e.getMessage().contains("'ftp://127.0.0.1/model.safetensors', which is not an http(s) URL"), e.getMessage());

        hub.cdnLocation = "http://[::1/cdn/model.safetensors";
        e = assertThrows(EdgeLmException.class, () -> client().download(REPO));
        assertTrue(e.getMessage().contains("unparsable Location 'http://[::1/cdn/model.safetensors'"), e.getMessage());

        hub.cdnLocation = "http:///no-host";
        e = assertThrows(EdgeLmException.class, () -> client().download(REPO));
        assertTrue(e.getMessage().contains("not an http(s) URL with a host"), e.getMessage());
    }

    @Test
    void malformedEndpointsAreClearErrors() {
        for (String endpoint : List.of("ftp://example.com", "huggingface.co", "http://", "file:///tmp")) {
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> HubClient.fromEnvironment(
                    Map.of("HF_ENDPOINT", endpoint, "EDGELM_CACHE", cache.toString()), null), endpoint);
            assertTrue(e.getMessage().startsWith("HF_ENDPOINT"), e.getMessage());
        }
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> HubClient.fromEnvironment(
                Map.of("HF_ENDPOINT", "http://a b", "EDGELM_CACHE", cache.toString()), null));
        assertTrue(e.getMessage().startsWith("HF_ENDPOINT 'http://a b' is not a URL"), e.getMessage());
        e = assertThrows(EdgeLmException.class, () -> new HubClient(URI.create("ftp://x"), null, cache, null));
        assertTrue(e.getMessage().contains("not an http(s) URL"), e.getMessage());
    }

    @Test
    void aCorruptPartialFileIsNeverUsed() throws Exception {
        Files.createDirectories(snapshot());
        byte[] model = hub.files.get("model.safetensors");
        byte[] wrong = Arrays.copyOf(model, 1000);
        wrong[500] ^= 1; // an earlier run wrote a bad byte before it was killed
        Files.write(snapshot().resolve("model.safetensors.part"), wrong);
        Path folder = client().download(REPO);
        assertArrayEquals(model, Files.readAllBytes(folder.resolve("model.safetensors")));
        List<FakeHub.Request> gets = hub.requestsTo("/cdn/model.safetensors");
        assertEquals(2, gets.size(), "resumed, found corrupt by its sha256, fetched whole");
        assertEquals("bytes=1000-", gets.get(0).range());
        assertNull(gets.get(1).range());
        assertFalse(Files.exists(snapshot().resolve("model.safetensors.part")));
    }

    @Test
    void aPartialFileLargerThanListedIsDiscarded() throws Exception {
        Files.createDirectories(snapshot());
        byte[] model = hub.files.get("model.safetensors");
        Files.write(snapshot().resolve("model.safetensors.part"), Arrays.copyOf(model, model.length + 10));
        Path folder = client().download(REPO);
        assertArrayEquals(model, Files.readAllBytes(folder.resolve("model.safetensors")));
        assertNull(hub.requestsTo("/cdn/model.safetensors").get(0).range());
    }
}
