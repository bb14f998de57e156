package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.engine.Benchmark;
import dev.edgelm.engine.Engine;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.util.BuildInfo;
import dev.edgelm.util.MachineInfo;
import dev.edgelm.util.PeakMemory;
import java.time.Instant;

/**
 * {@code edgelm benchmark --json}: one object. The flat figures of schema 1 stay where they were (medians, their
 * {@code _min} / {@code _max} for prefill, decode and TTFT); schema 2 adds what llama-bench's {@code -o json}
 * carries: the build ({@code build_version}, {@code build_commit}), the machine ({@code cpu_info},
 * {@code cpu_flags}, {@code jvm}, {@code vector_bits}), the model file ({@code model_filename}, {@code model_size},
 */
final class BenchmarkJson {
    static final int SCHEMA_VERSION = 2;

    private BenchmarkJson() {}

    static String of(ModelResolver.Resolved model, Engine engine, Benchmark.Report r, PeakMemory memory) {
        ObjectNode o = new ObjectMapper().createObjectNode();
        o.put("schema_version", SCHEMA_VERSION);
        o.put("build_version", BuildInfo.version());
        o.put("build_commit", BuildInfo.commit());
        o.put("cpu_info", MachineInfo.cpuModel());
        ArrayNode flags = o.putArray("cpu_flags");
        MachineInfo.cpuFlags().forEach(flags::add);
        o.put("jvm", MachineInfo.jvm());
        o.put("vector_bits", vectorBits());
        o.put("model_filename", model.path().toString());
        o.put("model_size", model.bytes());
        o.put("model_type", model.quant());
        o.put("test_time", Instant.now().toString());
        o.put("prefill_tokens_per_second", r.prefillTokensPerSecond().median());
        o.put("decode_tokens_per_second", r.decodeTokensPerSecond().median());
        o.put("init_seconds", engine.loadSeconds());
        o.put("ttft_seconds", r.ttftSeconds().median());
        o.put("decode_weight_bytes_per_token", r.decodeBytesPerToken());
        o.put("decode_weight_bytes_per_second", r.decodeBytesPerSecond());
        o.put("read_bandwidth_bytes_per_second", r.readBytesPerSecond());
        o.put("peak_rss_bytes", memory.bytes());
        o.put("peak_memory_source", memory.source());
        o.put("prefill_tokens_per_second_min", r.prefillTokensPerSecond().min());
        o.put("prefill_tokens_per_second_max", r.prefillTokensPerSecond().max());
        o.put("decode_tokens_per_second_min", r.decodeTokensPerSecond().min());
        o.put("decode_tokens_per_second_max", r.decodeTokensPerSecond().max());
        o.put("ttft_seconds_min", r.ttftSeconds().min());
        o.put("ttft_seconds_max", r.ttftSeconds().max());
        o.put("ttft_first_run_seconds", r.firstTtftSeconds());
        o.put("prompt_tokens", r.promptTokens());
        o.put("decode_tokens", r.decodeTokens());
        o.put("runs", r.runs());
        o.put("threads", engine.options().threads());
        o.put("max_num_tokens", engine.options().maxNumTokens());
        o.put("model", engine.modelPath().toString());
        ObjectNode samples = o.putObject("samples");
        put(samples.putArray("prefill_tokens_per_second"), r.samples().prefillTokensPerSecond());
        put(samples.putArray("decode_tokens_per_second"), r.samples().decodeTokensPerSecond());
        put(samples.putArray("ttft_seconds"), r.samples().ttftSeconds());
        put(samples.putArray("prefill_seconds"), r.samples().prefillSeconds());
        put(samples.putArray("decode_seconds"), r.samples().decodeSeconds());
        return o.toString();
    }

    private static void put(ArrayNode a, double[] values) {
        for (double v : values) {
            a.add(v);
        }
    }

    /** The Vector API's preferred vector width on this machine, in bits. */
    static int vectorBits() {
        return jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }
}
