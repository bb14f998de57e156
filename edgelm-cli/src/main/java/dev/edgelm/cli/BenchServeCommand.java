package dev.edgelm.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.server.ChatClient;
import dev.edgelm.server.Json;
import dev.edgelm.util.EdgeLmException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** A load driver for an OpenAI-compatible server: concurrent streaming chats, aggregate throughput, TTFT, latency. */
@Command(name = "bench-serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Load a running server (edgelm serve, llama-server, ...) with concurrent streaming chat requests; print "
                + "the aggregate decode throughput, time to first token and latency percentiles."})
final class BenchServeCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "URL", description = "The server, e.g. http://127.0.0.1:8431.")
    String url;

    @Option(names = "--clients", paramLabel = "N", defaultValue = "4", description = "Concurrent clients. Default: ${DEFAULT-VALUE}.")
    int clients;

    @Option(names = "--requests", paramLabel = "M", defaultValue = "16", description = "Requests in all. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(names = "--max-tokens", paramLabel = "T", defaultValue = "64", description = "Tokens per reply. Default: ${DEFAULT-VALUE}.")
    int maxTokens;

    @Option(names = "--prompt", paramLabel = "TEXT", defaultValue = "Write a short story about a lighthouse keeper.",
            description = "The user message (each request adds its number, so no two prompts are the same).")
    String prompt;

    @Option(names = "--model", paramLabel = "NAME", defaultValue = "default", description = "The 'model' field sent.")
    String model;

    @Option(names = "--api-key", paramLabel = "KEY", description = "Bearer token, if the server wants one.")
    String apiKey;

    @Override
    public void run() {
        if (clients < 1 || requests < 1 || maxTokens < 1) {
            throw new EdgeLmException("--clients, --requests and --max-tokens must be at least 1");
        }
        ChatClient client = new ChatClient(url, apiKey);
        AtomicInteger next = new AtomicInteger();
        ConcurrentLinkedQueue<ChatClient.Result> results = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            threads.add(Thread.ofVirtual().start(() -> {
                int i;
                while ((i = next.getAndIncrement()) < requests) {
                    ObjectNode body = Json.object().put("model", model).put("max_tokens", maxTokens).put("temperature", 0);
                    body.putArray("messages").addObject().put("role", "user").put("content", prompt + " (" + i + ")");
                    try {
                        results.add(client.chat(body, s -> { }, s -> { }));
                    } catch (EdgeLmException e) {
                        errors.add(e.getMessage());
                    }
                }
            }));
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        double wall = (System.nanoTime() - start) / 1e9;
        PrintWriter out = spec.commandLine().getOut();
        List<ChatClient.Result> rs = new ArrayList<>(results);
        long tokens = rs.stream().mapToLong(ChatClient.Result::completionTokens).sum();
        long promptTokens = rs.stream().mapToLong(ChatClient.Result::promptTokens).sum();
        out.printf(Locale.ROOT, "requests: %d ok, %d failed, %d clients, %.2f s%n", rs.size(), errors.size(), clients, wall);
        out.printf(Locale.ROOT, "throughput: %.1f generated tok/s aggregate, %.2f requests/s (%d prompt + %d generated tokens)%n",
                tokens / wall, rs.size() / wall, promptTokens, tokens);
        if (!rs.isEmpty()) {
            double[] ttft = rs.stream().mapToDouble(ChatClient.Result::firstTokenSeconds).sorted().toArray();
            double[] latency = rs.stream().mapToDouble(ChatClient.Result::totalSeconds).sorted().toArray();
            double[] perStream = rs.stream().filter(r -> r.totalSeconds() > r.firstTokenSeconds() && r.completionTokens() > 1)
                    .mapToDouble(r -> (r.completionTokens() - 1) / (r.totalSeconds() - r.firstTokenSeconds())).sorted().toArray();
            out.printf(Locale.ROOT, "time to first token: p50 %.3f s, p90 %.3f s, p99 %.3f s%n", pct(ttft, 50), pct(ttft, 90), pct(ttft, 99));
            // the first chunk with text comes late where the first tokens have none (a synthetic model's stand-in
            // tokenizer); EdgeLM reports when it sampled the first token, from the request's arrival
            double[] server = rs.stream().mapToDouble(r -> r.serverMillis("first_token_ms") / 1e3).filter(v -> v > 0).sorted().toArray();
            if (server.length == rs.size()) {
                out.printf(Locale.ROOT, "time to first token, server-side (timings.first_token_ms): p50 %.3f s, p90 %.3f s, p99 %.3f s%n",
                        pct(server, 50), pct(server, 90), pct(server, 99));
            }
            out.printf(Locale.ROOT, "latency: p50 %.3f s, p90 %.3f s, p99 %.3f s%n", pct(latency, 50), pct(latency, 90), pct(latency, 99));
            if (perStream.length > 0) {
                out.printf(Locale.ROOT, "decode per stream: p50 %.1f tok/s%n", pct(perStream, 50));
            }
        }
        errors.stream().distinct().limit(5).forEach(e -> out.println("error: " + e));
        out.flush();
        if (rs.isEmpty()) {
            throw new EdgeLmException("no request succeeded");
        }
    }

    /** Nearest-rank percentile of sorted values. */
    static double pct(double[] sorted, double p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
