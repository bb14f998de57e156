package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The queue bound, a client hanging up, and a drain on stop. Every wait is bounded. */
class ConcurrencyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LONG = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3000,"
            + "\"temperature\":1,\"seed\":1,\"stream\":true}";

    static double metric(TestServer s, String name) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\S+)$").matcher(s.get("/metrics").body());
        assertTrue(m.find(), name);
        return Double.parseDouble(m.group(1));
    }

    static void waitFor(TestServer s, String name, double value) throws Exception {
        for (int i = 0; i < 600 && metric(s, name) != value; i++) {
            Thread.sleep(50);
        }
        assertEquals(value, metric(s, name), name);
    }

    @Test
    void aFullQueueIs429AndAHangUpFreesTheSlot() throws Exception {
        try (TestServer s = new TestServer(1, 1, 4096, ServerOptions.loopback(0))) {
            RawHttp running = new RawHttp(s.server.port(), "/v1/chat/completions", LONG);
            assertEquals(200, running.status);
            assertNotNull(running.nextData()); // the role chunk: the generation holds the only slot
            assertNotNull(running.nextData());
            CompletableFuture<HttpResponse<String>> queued = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            waitFor(s, "edgelm_requests_deferred", 1);
            HttpResponse<String> refused = s.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"y\"}]}");
            assertEquals(429, refused.statusCode(), refused.body());
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
            assertEquals(429, JSON.readTree(refused.body()).get("error").get("code").asInt());

            double before = metric(s, "edgelm_tokens_predicted_total");
            running.close(); // hang up: the generation must stop and free the slot for the queued request
            HttpResponse<String> second = queued.get();
            assertEquals(200, second.statusCode(), second.body());
            waitFor(s, "edgelm_requests_processing", 0);
            waitFor(s, "edgelm_streams_open", 0);
            double generated = metric(s, "edgelm_tokens_predicted_total") - before;
            assertTrue(generated < 3000, "the cancelled generation stopped early: " + generated + " tokens");
        }
    }

    @Test
    void stopDrainsTheStreamsUnderWayAndRefusesNewRequests() throws Exception {
        TestServer s = new TestServer(1, 1, 1024, ServerOptions.loopback(0));
        RawHttp running = new RawHttp(s.server.port(), "/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":300,\"stream\":true}");
        assertNotNull(running.nextData());
        Thread stopper = Thread.ofPlatform().start(s::close);
        String last = null;
        String d;
        int chunks = 0;
        while ((d = running.nextData()) != null) {
            last = d;
            chunks++;
        }
        assertEquals("[DONE]", last, "the stream under way finished");
        assertTrue(chunks > 1);
        stopper.join(60_000);
        running.close();
        boolean refused;
        try {
            s.get("/health");
            refused = false;
        } catch (java.io.IOException e) {
            refused = true;
        }
        assertTrue(refused, "a stopped server takes no more requests");
    }

    /**
     * The bounded load test: 32 streaming clients for 30 s (system properties {@code edgelm.load.clients} and
     * {@code edgelm.load.seconds}) on 8 slots with room for everyone else in the queue. No 5xx; every stream ends
     * with [DONE] (or is a clean 429); afterwards nothing is left running (metrics back to zero) and the used
     * heap after a GC is back where it was before the load.
     */
    @Test
    void loadTest() throws Exception {
        int clients = Integer.getInteger("edgelm.load.clients", 32);
        int seconds = Integer.getInteger("edgelm.load.seconds", 30);
        LoadResult r = load(clients, seconds * 1000L, 8, 32);
        System.out.println("load test, " + clients + " clients, " + seconds + " s, 8 slots, queue 32: " + r);
        assertEquals(0, r.serverErrors, r.toString());
        assertEquals(0, r.broken, r.toString());
        assertTrue(r.completed > 0, r.toString());
        // Heap flat: what the load leaves behind after a GC is at most the prefix cache (it may fill its budget
        // with snapshots, by design) plus 32 MiB for buffers the JIT, Jetty and the HTTP client keep pooled.
        // A leaked sequence state of the tiny model is small, but a leak per request over hundreds of requests
        // (or of a per-request logits row) is not.
        long grown = r.heapAfter - r.heapBefore;
        assertTrue(grown < TestServer.CACHE_BYTES + (32L << 20), "used heap grew by " + (grown >> 20) + " MiB: " + r);
    }

    /** Used heap after a few full GCs (they settle what is still reachable). */
    static long usedHeapAfterGc() throws InterruptedException {
        java.lang.management.MemoryMXBean mem = java.lang.management.ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    record LoadResult(int completed, int refused, int serverErrors, int broken, long heapBefore, long heapAfter) {}

    static LoadResult load(int clients, long millis, int parallel, int queue) throws Exception {
        try (TestServer s = new TestServer(parallel, queue, 1024, ServerOptions.loopback(0))) {
            // one request first, so that the classes and buffers a request needs are there before the baseline
            assertEquals(200, s.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"warm\"}],"
                    + "\"max_tokens\":4,\"stream\":true}").statusCode());
            long heapBefore = usedHeapAfterGc();
            long deadline = System.currentTimeMillis() + millis;
            int[] completed = new int[clients];
            int[] refused = new int[clients];
            int[] serverErrors = new int[clients];
            int[] broken = new int[clients];
            Thread[] threads = new Thread[clients];
            for (int c = 0; c < clients; c++) {
                int id = c;
                threads[c] = Thread.ofVirtual().start(() -> {
                    int n = 0;
                    while (System.currentTimeMillis() < deadline) {
                        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"client " + id + " request " + n++ + "\"}],"
                                + "\"max_tokens\":" + (8 + (id * 7 + n) % 40) + ",\"temperature\":0.8,\"stream\":true,"
                                + "\"stream_options\":{\"include_usage\":true}}";
                        try (RawHttp h = new RawHttp(s.server.port(), "/v1/chat/completions", body)) {
                            if (h.status == 429) {
                                refused[id]++;
                                Thread.sleep(50);
                                continue;
                            }
                            if (h.status >= 500) {
                                serverErrors[id]++;
                                continue;
                            }
                            String last = null;
                            String d;
                            while ((d = h.nextData()) != null) {
                                if (!d.equals("[DONE]")) {
                                    JsonNode j = JSON.readTree(d);
                                    if (j.has("error")) {
                                        broken[id]++;
                                    }
                                }
                                last = d;
                            }
                            if ("[DONE]".equals(last)) {
                                completed[id]++;
                            } else {
                                broken[id]++;
                            }
                        } catch (Exception e) {
                            broken[id]++;
                        }
                    }
                });
            }
            for (Thread t : threads) {
                t.join(120_000);
            }
            waitFor(s, "edgelm_requests_processing", 0);
            waitFor(s, "edgelm_requests_deferred", 0);
            waitFor(s, "edgelm_streams_open", 0);
            return new LoadResult(sum(completed), sum(refused), sum(serverErrors), sum(broken), heapBefore, usedHeapAfterGc());
        }
    }

    private static int sum(int[] a) {
        int s = 0;
        for (int x : a) {
            s += x;
        }
        return s;
    }
}
