package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchmarkCommandTest {
    private static final String TINY_A = "src/test/resources/fixtures/qwen35/tiny-a";

    @Test
    void jsonHasTheAgreedKeys() throws Exception {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "2", "--threads", "1", "--json",
                "--read-loop-mib", "0");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        for (String key : new String[] {"prefill_tokens_per_second", "decode_tokens_per_second", "init_seconds",
                "ttft_seconds", "ttft_first_run_seconds", "peak_rss_bytes"}) {
            assertTrue(o.get(key).isNumber() && o.get(key).asDouble() > 0, key + " in " + r.out());
        }
        assertEquals(8, o.get("prompt_tokens").asInt());
        assertEquals(4, o.get("decode_tokens").asInt());
        assertEquals(2, o.get("runs").asInt());
        assertEquals(1, o.get("threads").asInt());
        assertEquals(13, o.get("max_num_tokens").asInt());
        assertEquals(languageModelMatrixBytes(), o.get("decode_weight_bytes_per_token").asLong(),
                "tiny-a ties its head to the embedding: a decode step reads every matrix once");
        assertEquals(o.get("decode_tokens_per_second").asDouble() * o.get("decode_weight_bytes_per_token").asLong(),
                o.get("decode_weight_bytes_per_second").asDouble(), 1e-6 * o.get("decode_weight_bytes_per_second").asDouble());
        assertTrue(o.get("read_bandwidth_bytes_per_second").asDouble() > 0);
        // schema 2: what llama-bench's -o json carries, and every run's samples
        assertEquals(2, o.get("schema_version").asInt());
        assertTrue(o.get("build_version").isTextual() && o.get("build_commit").isTextual() && o.get("cpu_info").isTextual()
                && o.get("jvm").isTextual() && o.get("cpu_flags").isArray() && o.get("vector_bits").asInt() >= 64, r.out());
        assertEquals(java.nio.file.Path.of(TINY_A).toString(), o.get("model_filename").asText());
        assertEquals("bf16", o.get("model_type").asText(), "tiny-a is stored in BF16");
        JsonNode samples = o.get("samples");
        for (String key : new String[] {"prefill_tokens_per_second", "decode_tokens_per_second", "ttft_seconds",
                "prefill_seconds", "decode_seconds"}) {
            assertEquals(2, samples.get(key).size(), key + ": one sample per run");
        }
        double[] decode = {samples.get("decode_tokens_per_second").get(0).asDouble(), samples.get("decode_tokens_per_second").get(1).asDouble()};
        assertEquals((decode[0] + decode[1]) / 2, o.get("decode_tokens_per_second").asDouble(), 1e-9, "median of two = mean");
        assertEquals(Math.min(decode[0], decode[1]), o.get("decode_tokens_per_second_min").asDouble(), 0);
        assertEquals(4 / samples.get("decode_seconds").get(0).asDouble(), decode[0], 1e-9 * decode[0]);
        java.util.List<String> progress = r.err().lines().toList();
        String[] expected = {"benchmark: loading " + java.nio.file.Path.of(TINY_A) + " (", "benchmark: warm-up run (8 prompt + 4 decode",
                "benchmark: run 1 of 2 (", "benchmark: run 2 of 2 (", "benchmark: measuring the memory read bandwidth ..."};
        assertEquals(expected.length, progress.size(), r.err());
        for (int i = 0; i < expected.length; i++) {
            assertTrue(progress.get(i).startsWith(expected[i]), "progress on stderr: " + expected[i] + " in\n" + r.err());
        }
    }

    /** Bytes of the 2-D text-decoder tensors, read from the safetensors header (every matrix once). */
    private static long languageModelMatrixBytes() throws Exception {
        byte[] file = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(TINY_A, "model.safetensors"));
        long headerLength = java.nio.ByteBuffer.wrap(file, 0, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        JsonNode header = new ObjectMapper().readTree(new String(file, 8, (int) headerLength, StandardCharsets.UTF_8));
        long bytes = 0;
        for (var e : header.properties()) {
            JsonNode t = e.getValue();
            if (e.getKey().startsWith("model.language_model.") && t.has("shape") && t.get("shape").size() == 2) {
                bytes += t.get("data_offsets").get(1).asLong() - t.get("data_offsets").get(0).asLong();
            }
        }
        return bytes;
    }

    @Test
    void textHasLiteRtLmLines() {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "1", "--threads", "1",
                "--read-loop-mib", "0");
        assertEquals(0, r.exitCode(), r.err());
        for (String pattern : new String[] {"(?m)^EdgeLM [^ ]+ \\((?:[0-9a-f]+|unknown)\\), .*Vector API [0-9]+-bit$",
                "(?m)^CPU: .+", "(?m)^Model: .*tiny-a \\([0-9.]+ (KiB|MiB), bf16; ", "(?m)^Prefill speed: [0-9.]+ tokens/sec", "(?m)^Decode speed: [0-9.]+ tokens/sec",
                "(?m)^Init time: [0-9.]+ s$", "(?m)^Time to first token: [0-9.]+ s", "(?m)^Peak memory: [0-9.]+ MiB",
                "(?m)^Decode weight traffic: [0-9.]+ MB per token, [0-9.]+ GB/s$",
                "(?m)^Memory read bandwidth: [0-9.]+ GB/s \\(same threads, measured after the runs\\); decode used [0-9]+% of it$"}) {
            assertTrue(java.util.regex.Pattern.compile(pattern).matcher(r.out()).find(), pattern + " in\n" + r.out());
        }
    }

    /** A stand-in llama-bench that prints a recorded run, so the side-by-side block is checked against known figures. */
    private static Path fakeLlamaBench(Path dir) throws Exception {
        Path recorded = Path.of("src/test/resources/fixtures/llama-bench/pp32-tg8-0.8b-q8_0.json").toAbsolutePath();
        Path script = dir.resolve("llama-bench");
        Files.writeString(script, "#!/bin/sh\ncat '" + recorded + "'\n");
        assertTrue(script.toFile().setExecutable(true));
        return script;
    }

    private static CliRunner runWith(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(ProcessContext.none().withEnv(env), new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRunner(code, out.toString(), err.toString());
    }

    @Test
    void comparesWithARecordedLlamaBenchRunAndReportsTheReadLoops(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/bin/sh")), "the stand-in llama-bench is a shell script");
        Path llama = fakeLlamaBench(dir);
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("EDGELM_CACHE", dir.resolve("cache").toString());
        CliRunner r = runWith(env, "benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "1", "--threads", "1",
                "--read-loop-mib", "8", "--compare-llama-bench", llama.toString(), "--compare-rounds", "2");
        assertEquals(0, r.exitCode(), r.err());
        Matcher round = Pattern.compile("(?m)^  round ([12]): prefill ([0-9.]+) vs ([0-9.]+) tokens/sec \\(([0-9.]+)x\\), "
                + "decode ([0-9.]+) vs ([0-9.]+) tokens/sec \\(([0-9.]+)x, [0-9.]+ GB/s\\); read loops: .*Java [0-9.]+, EdgeLM's [0-9.]+ GB/s$")
                .matcher(r.out());
        int rounds = 0;
        while (round.find()) {
            rounds++;
            // llama-bench's figures are the medians of the recorded samples_ts
            assertEquals("1.12", round.group(3), "(1.0977 + 1.14645) / 2");
            assertEquals("0.07", round.group(6), "(0.0813638 + 0.0680941) / 2");
            double prefill = Double.parseDouble(round.group(2));
            double decode = Double.parseDouble(round.group(5));
            assertEquals(prefill / 1.122075, Double.parseDouble(round.group(4)), 0.006 / 1.122075 + 0.005, r.out());
            assertEquals(decode / 0.07472895, Double.parseDouble(round.group(7)), 0.006 / 0.07472895 + 0.005, r.out());
        }
        assertEquals(2, rounds, r.out());
        assertTrue(r.out().contains("Side by side with " + llama + " (build unknown), 2 threads, pp32 / tg8"), r.out());
        assertTrue(Pattern.compile("(?m)^EdgeLM / llama.cpp: prefill [0-9.]+-[0-9.]+x, decode [0-9.]+-[0-9.]+x$").matcher(r.out()).find());
        assertTrue(Pattern.compile("(?m)^Read loops \\(same threads, 8 MiB buffers, measured after the runs\\): "
                + "(native \\(C, (avx512|avx2|sse2)\\) [0-9.]+ GB/s|native: not measured \\(.+\\)), plain Java \\(Vector API\\) [0-9.]+ GB/s$")
                .matcher(r.out()).find(), r.out());
        assertTrue(r.err().contains("-t 1 -p 8 -n 4 -r 1 -o json"), "the same threads, lengths and runs: " + r.err());

        CliRunner j = runWith(env, "benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "1", "--threads", "1", "--json",
                "--read-loop-mib", "8", "--compare-llama-bench", llama.toString(), "--compare-rounds", "1");
        assertEquals(0, j.exitCode(), j.err());
        JsonNode o = new ObjectMapper().readTree(j.out());
        JsonNode x = o.get("llama_bench").get("rounds").get(0);
        assertEquals(1.122075, x.get("llama_prefill_tokens_per_second").asDouble(), 1e-9);
        assertEquals(0.07472895, x.get("llama_decode_tokens_per_second").asDouble(), 1e-9);
        assertEquals(o.get("prefill_tokens_per_second").asDouble() / 1.122075, x.get("prefill_ratio").asDouble(), 1e-9);
        assertEquals(o.get("decode_tokens_per_second").asDouble() / 0.07472895, x.get("decode_ratio").asDouble(), 1e-9);
        assertEquals(8L << 20, o.get("read_loops").get("buffer_bytes").asLong());
        assertTrue(o.get("read_loops").get("java_bytes_per_second").asDouble() > 0);
    }

    @Test
    void aMissingLlamaBenchIsAClearError() {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "--compare-llama-bench", "no/such/llama-bench");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("error: no/such/llama-bench: no such file (--compare-llama-bench"), r.err());
        r = CliRunner.run("benchmark", TINY_A, "--read-loop-mib", "-1");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("--read-loop-mib must be in 0..1048576"), r.err());
    }

    @Test
    void badArgumentsAreClearErrors() {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "-p", "8", "-d", "4", "--max-num-tokens", "10");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("\nerror: max number of tokens 10 is too small"), r.err());
        r = CliRunner.run("benchmark", TINY_A, "-d", "0");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("-d/--decode-tokens must be >= 1"), r.err());
    }
}
