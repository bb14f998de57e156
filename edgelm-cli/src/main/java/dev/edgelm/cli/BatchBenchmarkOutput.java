package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.engine.Benchmark;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.batch.BatchBenchmark;
import java.io.PrintWriter;
import java.util.Locale;

/** Prints {@code edgelm benchmark --parallel}: one line per N, as text or JSON. */
final class BatchBenchmarkOutput {
    private BatchBenchmarkOutput() {}

    static void print(PrintWriter out, Engine engine, BatchBenchmark.Report r, boolean json) {
        if (json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("model", engine.modelPath().toString());
            o.put("threads", engine.options().threads());
            o.put("prompt_tokens", r.promptTokens());
            o.put("decode_tokens", r.decodeTokens());
            o.put("runs", r.runs());
            o.put("mismatched_sequences", r.mismatches());
            put(o, "session_decode_tokens_per_second", r.sessionDecode());
            put(o, "session_decode_tokens_per_cpu_second", r.sessionDecodePerCpuSecond());
            ArrayNode rows = o.putArray("parallel");
            for (BatchBenchmark.Row row : r.rows()) {
                ObjectNode n = rows.addObject();
                n.put("sequences", row.parallel());
                put(n, "aggregate_decode_tokens_per_second", row.aggregateDecode());
                put(n, "aggregate_prefill_tokens_per_second", row.aggregatePrefill());
                put(n, "throughput_tokens_per_second", row.throughput());
                put(n, "sequence_decode_tokens_per_second", row.sequenceDecode());
                put(n, "ttft_seconds", row.ttftSeconds());
                put(n, "aggregate_decode_tokens_per_cpu_second", row.decodePerCpuSecond());
                put(n, "lockstep_decode_tokens_per_second", row.lockstepDecode());
                put(n, "lockstep_decode_tokens_per_cpu_second", row.lockstepDecodePerCpuSecond());
            }
            out.println(o);
            out.flush();
            return;
        }
        out.println("Model: " + engine.modelPath() + " (" + engine.config().numLayers() + " layers, vocab "
                + engine.config().vocabSize() + ")");
        out.println("Threads: " + engine.options().threads() + ", prompt tokens: " + r.promptTokens() + ", decode tokens: "
                + r.decodeTokens() + " per sequence, runs: " + r.runs() + " (after 1 warm-up round; medians, min-max)");
        out.println("Single stream (Session, same rounds): decode " + s(r.sessionDecode(), "%.1f") + " tok/s, "
                + s(r.sessionDecodePerCpuSecond(), "%.2f") + " tok per CPU-second");
        out.println(f("%-4s %-24s %-24s %-24s %-24s %-24s %-22s %-24s %-22s", "N", "aggregate decode tok/s",
                "per CPU-second", "lockstep decode tok/s", "lockstep per CPU-second", "aggregate prefill tok/s", "throughput tok/s",
                "per-sequence decode", "TTFT s"));
        for (BatchBenchmark.Row row : r.rows()) {
            out.println(f("%-4d %-24s %-24s %-24s %-24s %-24s %-22s %-24s %-22s", row.parallel(),
                    s(row.aggregateDecode(), "%.1f"), s(row.decodePerCpuSecond(), "%.2f"), s(row.lockstepDecode(), "%.1f"),
                    s(row.lockstepDecodePerCpuSecond(), "%.2f"), s(row.aggregatePrefill(), "%.1f"), s(row.throughput(), "%.1f"),
                    s(row.sequenceDecode(), "%.1f"), s(row.ttftSeconds(), "%.2f")));
        }
        out.println("Lockstep: all N prompts prefilled, then d batched steps of all N timed (llama-batched-bench's S_TG shape);"
                + " the aggregate column also times the steps where some sequences are still prefilling or done.");
        out.println(r.mismatches() == 0
                ? "Every sequence produced the same tokens whatever N, in the scheduler and in lockstep"
                        + " (sequence 0: those of the single-stream run)."
                : r.mismatches() + " of the sequences produced different tokens at different N, in lockstep or (sequence 0)"
                        + " against the single-stream run.");
        out.flush();
    }

    private static void put(ObjectNode n, String name, Benchmark.Stat s) {
        n.put(name, s.median());
        n.put(name + "_min", s.min());
        n.put(name + "_max", s.max());
    }

    private static String s(Benchmark.Stat s, String fmt) {
        return f(fmt, s.median()) + " (" + f(fmt, s.min()) + "-" + f(fmt, s.max()) + ")";
    }

    private static String f(String fmt, Object... v) {
        return String.format(Locale.ROOT, fmt, v);
    }
}
