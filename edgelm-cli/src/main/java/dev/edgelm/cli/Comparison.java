package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.bench.LlamaBench;
import dev.edgelm.bench.NativeReadLoop;
import dev.edgelm.bench.ReadLoops;
import dev.edgelm.engine.Benchmark;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** {@code edgelm benchmark}'s read-loop lines and its side-by-side block with llama-bench (text and JSON). */
final class Comparison {
    private Comparison() {}

    /** One round: EdgeLM's runs, the read loops right after them, then llama-bench's runs. */
    record Round(Benchmark.Report edgelm, ReadLoops.Figures loops, LlamaBench.Result llama) {
        double llamaPrefill() {
            return LlamaBench.median(llama.prefillSamples(), llama.prefillTokensPerSecond());
        }

        double llamaDecode() {
            return LlamaBench.median(llama.decodeSamples(), llama.decodeTokensPerSecond());
        }

        double prefillRatio() {
            return edgelm.prefillTokensPerSecond().median() / llamaPrefill();
        }

        double decodeRatio() {
            return edgelm.decodeTokensPerSecond().median() / llamaDecode();
        }
    }

    /** The native and plain Java loops beside decode's traffic (nothing when they were skipped). */
    static void printLoops(PrintWriter out, Benchmark.Report r, ReadLoops.Figures loops) {
        if (loops == null) {
            return;
        }
        double decode = r.decodeBytesPerSecond();
        NativeReadLoop.Result c = loops.nativeLoop();
        String nativePart = c.available()
                ? format("native (C, %s) %.1f GB/s", c.isa(), c.bytesPerSecond() / 1e9)
                : "native: not measured (" + c.unavailable() + ")";
        out.println(format("Read loops (same threads, %d MiB buffers, measured after the runs): ", loops.bufferBytes() >> 20)
                + nativePart + format(", plain Java (Vector API) %.1f GB/s", loops.javaBytesPerSecond() / 1e9));
        out.println("Decode used " + (c.available() ? format("%.0f%% of the native loop, ", 100 * decode / c.bytesPerSecond()) : "")
                + format("%.0f%% of the plain Java loop", 100 * decode / loops.javaBytesPerSecond()));
    }

    static void print(PrintWriter out, Path llamaBench, List<Round> rounds) {
        LlamaBench.Result first = rounds.getFirst().llama();
        out.println("Side by side with " + llamaBench + (first.buildCommit().isEmpty() ? "" : " (build " + first.buildCommit() + ")")
                + ", " + first.threads() + " threads, pp" + first.promptTokens() + " / tg" + first.genTokens()
                + ", EdgeLM then llama-bench in each round:");
        double pMin = Double.MAX_VALUE;
        double pMax = 0;
        double dMin = Double.MAX_VALUE;
        double dMax = 0;
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            String loops = "";
            if (r.loops() != null) {
                NativeReadLoop.Result c = r.loops().nativeLoop();
                loops = "; read loops: " + (c.available() ? format("native %.1f, ", c.bytesPerSecond() / 1e9) : "")
                        + format("Java %.1f, EdgeLM's %.1f GB/s", r.loops().javaBytesPerSecond() / 1e9,
                        r.edgelm().readBytesPerSecond() / 1e9);
            }
            out.println(format("  round %d: prefill %.2f vs %.2f tokens/sec (%.2fx), decode %.2f vs %.2f tokens/sec (%.2fx, %.1f GB/s)",
                    i + 1, r.edgelm().prefillTokensPerSecond().median(), r.llamaPrefill(), r.prefillRatio(),
                    r.edgelm().decodeTokensPerSecond().median(), r.llamaDecode(), r.decodeRatio(),
                    r.edgelm().decodeBytesPerSecond() / 1e9) + loops);
            pMin = Math.min(pMin, r.prefillRatio());
            pMax = Math.max(pMax, r.prefillRatio());
            dMin = Math.min(dMin, r.decodeRatio());
            dMax = Math.max(dMax, r.decodeRatio());
        }
        out.println(format("EdgeLM / llama.cpp: prefill %.2f-%.2fx, decode %.2f-%.2fx", pMin, pMax, dMin, dMax));
    }

    /** {@code json} with the read loops and the rounds added ({@code read_loops}, {@code llama_bench}). */
    static String addJson(String json, ReadLoops.Figures loops, Path llamaBench, List<Round> rounds) {
        if (loops == null && llamaBench == null) {
            return json;
        }
        try {
            ObjectNode o = (ObjectNode) new ObjectMapper().readTree(json);
            if (loops != null) {
                putLoops(o.putObject("read_loops"), loops);
            }
            if (llamaBench != null) {
                ObjectNode lb = o.putObject("llama_bench");
                lb.put("path", llamaBench.toString());
                ArrayNode a = lb.putArray("rounds");
                for (Round r : rounds) {
                    ObjectNode x = a.addObject();
                    x.put("edgelm_prefill_tokens_per_second", r.edgelm().prefillTokensPerSecond().median());
                    x.put("edgelm_decode_tokens_per_second", r.edgelm().decodeTokensPerSecond().median());
                    x.put("edgelm_read_bandwidth_bytes_per_second", r.edgelm().readBytesPerSecond());
                    x.put("llama_prefill_tokens_per_second", r.llamaPrefill());
                    x.put("llama_decode_tokens_per_second", r.llamaDecode());
                    x.put("llama_build_commit", r.llama().buildCommit());
                    x.put("prefill_ratio", r.prefillRatio());
                    x.put("decode_ratio", r.decodeRatio());
                    if (r.loops() != null) {
                        putLoops(x.putObject("read_loops"), r.loops());
                    }
                }
            }
            return o.toString();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putLoops(ObjectNode o, ReadLoops.Figures loops) {
        o.put("buffer_bytes", loops.bufferBytes());
        NativeReadLoop.Result c = loops.nativeLoop();
        if (c.available()) {
            o.put("native_bytes_per_second", c.bytesPerSecond());
            o.put("native_isa", c.isa());
        } else {
            o.put("native_unavailable", c.unavailable());
        }
        o.put("java_bytes_per_second", loops.javaBytesPerSecond());
    }

    private static String format(String fmt, Object... values) {
        return String.format(Locale.ROOT, fmt, values);
    }
}
