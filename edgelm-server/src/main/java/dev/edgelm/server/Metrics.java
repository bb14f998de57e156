package dev.edgelm.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Counters for {@code GET /metrics}, in Prometheus' text format (names prefixed {@code edgelm_}). */
final class Metrics {
    private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();
    private final AtomicLong cacheHits = new AtomicLong();
    private final AtomicLong streamsOpen = new AtomicLong();

    void request(String endpoint, int status) {
        requests.computeIfAbsent("endpoint=\"" + endpoint + "\",status=\"" + status + "\"", k -> new AtomicLong()).incrementAndGet();
    }

    void cacheHit() {
        cacheHits.incrementAndGet();
    }

    void streamOpened() {
        streamsOpen.incrementAndGet();
    }

    void streamClosed() {
        streamsOpen.decrementAndGet();
    }

    long openStreams() {
        return streamsOpen.get();
    }

    String render(GenerationBackend.Stats s) {
        StringBuilder sb = new StringBuilder();
        sb.append("# HELP edgelm_requests_total HTTP requests answered, by endpoint and status.\n");
        sb.append("# TYPE edgelm_requests_total counter\n");
        new TreeMap<>(requests).forEach((k, v) -> sb.append("edgelm_requests_total{").append(k).append("} ").append(v.get()).append('\n'));
        if (s != null) {
            counter(sb, "edgelm_prompt_tokens_total", "Prompt tokens of all requests.", s.promptTokens());
            counter(sb, "edgelm_prompt_tokens_cached_total", "Prompt tokens whose state was reused from an earlier request.", s.cachedTokens());
            counter(sb, "edgelm_prompt_tokens_processed_total", "Prompt tokens prefilled.", s.prefilledTokens());
            counter(sb, "edgelm_prompt_seconds_total", "Time spent prefilling.", s.prefillSeconds());
            counter(sb, "edgelm_tokens_predicted_total", "Tokens generated.", s.decodedTokens());
            counter(sb, "edgelm_tokens_predicted_seconds_total", "Time spent generating.", s.decodeSeconds());
            counter(sb, "edgelm_cache_hits_total", "Requests that reused state of an earlier one.", cacheHits.get());
            counter(sb, "edgelm_decode_steps_total", "Batched decode forward passes (tokens predicted / steps = mean batch).", s.decodeSteps());
            counter(sb, "edgelm_snapshot_tokens_total", "Prompt tokens prefilled again after a request, to keep the state where its next turn parts.", s.snapshotTokens());
            counter(sb, "edgelm_snapshot_seconds_total", "Time spent on those.", s.snapshotSeconds());
            gauge(sb, "edgelm_prompt_tokens_seconds", "Average prefill throughput (tokens/s).",
                    s.prefillSeconds() > 0 ? s.prefilledTokens() / s.prefillSeconds() : 0);
            gauge(sb, "edgelm_predicted_tokens_seconds", "Average decode throughput, all sequences together (tokens/s).",
                    s.decodeSeconds() > 0 ? s.decodedTokens() / s.decodeSeconds() : 0);
            gauge(sb, "edgelm_requests_processing", "Generations running.", s.active());
            gauge(sb, "edgelm_requests_deferred", "Requests waiting for a slot (queue depth).", s.queued());
            gauge(sb, "edgelm_snapshot_bytes", "Memory held by state snapshots for reuse.", s.snapshotBytes());
        }
        gauge(sb, "edgelm_streams_open", "Streaming responses being written.", streamsOpen.get());
        return sb.toString();
    }

    private static void counter(StringBuilder sb, String name, String help, double v) {
        metric(sb, name, help, "counter", v);
    }

    private static void gauge(StringBuilder sb, String name, String help, double v) {
        metric(sb, name, help, "gauge", v);
    }

    private static void metric(StringBuilder sb, String name, String help, String type, double v) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        sb.append(name).append(' ').append(v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v)).append('\n');
    }
}
