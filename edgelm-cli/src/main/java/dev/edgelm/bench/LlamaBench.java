package dev.edgelm.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * llama.cpp's {@code llama-bench} run on the same file and threads, for a side-by-side figure: its
 * {@code -o json} output (an array with one object per test: {@code n_prompt > 0, n_gen = 0} is the prompt
 * test, {@code n_prompt = 0, n_gen > 0} the generation test; {@code avg_ts} and {@code samples_ts} in tokens
 * per second) parsed with Jackson.
 */
public final class LlamaBench {
    private static final long TIMEOUT_SECONDS = 3600;

    private LlamaBench() {}

    /** One invocation's figures: prompt and generation tokens per second (mean and every sample). */
    public record Result(int promptTokens, int genTokens, int threads, double prefillTokensPerSecond,
                         double[] prefillSamples, double decodeTokensPerSecond, double[] decodeSamples,
                         String buildCommit, String modelType) {}

    /** The command line: {@code -m MODEL -t T -p P -n D -r RUNS -o json}. */
    public static List<String> command(Path llamaBench, Path model, int threads, int promptTokens, int decodeTokens,
                                       int runs) {
        return List.of(llamaBench.toString(), "-m", model.toString(), "-t", Integer.toString(threads),
                "-p", Integer.toString(promptTokens), "-n", Integer.toString(decodeTokens),
                "-r", Integer.toString(runs), "-o", "json");
    }

    /** {@code path} if it names an executable file, else a user error naming the option. */
    public static Path check(Path path) {
        if (!Files.isRegularFile(path)) {
            throw new EdgeLmException(path + ": no such file (--compare-llama-bench wants the llama-bench executable)");
        }
        if (!Files.isExecutable(path)) {
            throw new EdgeLmException(path + ": not executable (--compare-llama-bench)");
        }
        return path;
    }

    /** Runs llama-bench and parses its output; a failure is a user error carrying its last line of stderr. */
    public static Result run(Path llamaBench, Path model, int threads, int promptTokens, int decodeTokens, int runs) {
        List<String> command = command(llamaBench, model, threads, promptTokens, decodeTokens, runs);
        Path log = null;
        try {
            log = Files.createTempFile("edgelm-llama-bench-", ".log");
            Process p = new ProcessBuilder(new ArrayList<>(command)).redirectError(log.toFile()).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new EdgeLmException("llama-bench did not finish within " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                List<String> err = Files.readAllLines(log, StandardCharsets.UTF_8);
                throw new EdgeLmException(llamaBench + " exited with status " + p.exitValue()
                        + (err.isEmpty() ? "" : ": " + err.getLast()));
            }
            return parse(new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new EdgeLmException("cannot run " + llamaBench + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EdgeLmException("interrupted while llama-bench ran");
        } finally {
            if (log != null) {
                try {
                    Files.deleteIfExists(log);
                } catch (IOException ignored) {
                    // a temporary file left behind
                }
            }
        }
    }

    /** Parses {@code llama-bench -o json}: exactly one prompt test and one generation test expected. */
    public static Result parse(String json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new EdgeLmException("llama-bench output is not JSON (was it run with -o json?): " + e.getOriginalMessage());
        }
        if (root == null || !root.isArray()) {
            throw new EdgeLmException("llama-bench output is not a JSON array of tests");
        }
        JsonNode pp = null;
        JsonNode tg = null;
        for (JsonNode test : root) {
            int nPrompt = intField(test, "n_prompt");
            int nGen = intField(test, "n_gen");
            if (nPrompt > 0 && nGen == 0) {
                pp = pick(pp, test, "prompt");
            } else if (nPrompt == 0 && nGen > 0) {
                tg = pick(tg, test, "generation");
            }
        }
        if (pp == null || tg == null) {
            throw new EdgeLmException("llama-bench output lacks a " + (pp == null ? "prompt (n_prompt > 0, n_gen = 0)"
                    : "generation (n_prompt = 0, n_gen > 0)") + " test");
        }
        return new Result(intField(pp, "n_prompt"), intField(tg, "n_gen"), intField(pp, "n_threads"),
                number(pp, "avg_ts"), samples(pp), number(tg, "avg_ts"), samples(tg),
                pp.path("build_commit").asText(""), pp.path("model_type").asText(""));
    }

    private static JsonNode pick(JsonNode seen, JsonNode test, String what) {
        if (seen != null) {
            throw new EdgeLmException("llama-bench output has more than one " + what + " test: run one -p and one -n value");
        }
        return test;
    }

    private static int intField(JsonNode test, String name) {
        JsonNode v = test.get(name);
        if (v == null || !v.canConvertToInt()) {
            throw new EdgeLmException("llama-bench output: a test lacks the integer field '" + name + "'");
        }
        return v.intValue();
    }

    private static double number(JsonNode test, String name) {
        JsonNode v = test.get(name);
        if (v == null || !v.isNumber()) {
            throw new EdgeLmException("llama-bench output: a test lacks the number field '" + name + "'");
        }
        return v.doubleValue();
    }

    private static double[] samples(JsonNode test) {
        JsonNode a = test.get("samples_ts");
        if (a == null || !a.isArray()) {
            return new double[0];
        }
        double[] v = new double[a.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = a.get(i).asDouble();
        }
        return v;
    }

    /** The median of {@code samples}, or {@code fallback} when there are none. */
    public static double median(double[] samples, double fallback) {
        if (samples.length == 0) {
            return fallback;
        }
        double[] v = samples.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
