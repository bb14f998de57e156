package dev.edgelm.cli;

import dev.edgelm.bench.LlamaBench;
import dev.edgelm.bench.ReadLoops;
import dev.edgelm.engine.Benchmark;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.batch.BatchBenchmark;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.PeakMemory;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import dev.edgelm.hub.HubClient;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.util.BuildInfo;
import dev.edgelm.util.MachineInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Prefill / decode speed, time to first token, load time and peak memory, LiteRT-LM style. */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"Measure prefill and decode speed on a synthetic prompt (no chat template): one warm-up run, "
                + "then --runs runs on fresh sessions; prints the median (and min/max) over the runs.",
                "Decode steps are greedy and ignore stop tokens."})
final class BenchmarkCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = ModelSource.MODEL_HELP
            + " The same name loads the same file as 'edgelm run'.")
    String model;

    @Mixin
    ModelSource source;

    @Option(names = {"-p", "--prefill-tokens"}, paramLabel = "N", defaultValue = "256",
            description = "Prompt length in tokens (default ${DEFAULT-VALUE}).")
    int prefillTokens;

    @Option(names = {"-d", "--decode-tokens"}, paramLabel = "N", defaultValue = "256",
            description = "Decode steps (default ${DEFAULT-VALUE}).")
    int decodeTokens;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "3", description = "Measured runs (default ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", description = "Worker threads (default: physical cores).")
    Integer threads;

    @Option(names = "--max-num-tokens", paramLabel = "N",
            description = "Context capacity of the sessions (default: prompt + decode tokens + 1).")
    Integer maxNumTokens;

    @Option(names = "--image", paramLabel = "FILE", description = "Also time the vision tower on this image "
            + "(preprocessing once, then one warm-up and --runs encodes).")
    Path image;

    @Option(names = "--mmproj", paramLabel = "FILE", description = "The vision projector (default: found beside the model).")
    Path mmproj;

    @Option(names = "--image-max-pixels", paramLabel = "N", description = "Resize the image to at most N pixels.")
    Long imageMaxPixels;

    @Option(names = "--image-min-pixels", paramLabel = "N", description = "Resize the image to at least N pixels.")
    Long imageMinPixels;

    @Option(names = "--json", description = "Print one JSON object instead of text (schema_version "
            + BenchmarkJson.SCHEMA_VERSION + ": the build, machine and model, the figures, and every run's samples).")
    boolean json;

    @Option(names = "--parallel", paramLabel = "N", split = ",",
            description = "Measure the batched engine instead: N sequences at once (several values alternate within each run), "
                    + "aggregate and per-sequence prefill and decode speed, and lockstep decode (all N prefilled, then "
                    + "full-batch steps only: what llama-batched-bench reports as S_TG; see docs/batching.md).")
    java.util.List<Integer> parallel;

    @Option(names = "--read-loop-mib", paramLabel = "MIB", defaultValue = "1024",
            description = "Buffer of the native (C, built with the machine's cc when there is one) and plain Java read "
                    + "loops measured after the runs on the same threads (default ${DEFAULT-VALUE}; 0 skips them).")
    long readLoopMib;

    @Option(names = "--compare-llama-bench", paramLabel = "PATH",
            description = "Also run llama.cpp's llama-bench (this executable) on the same file and threads "
                    + "(-p, -d, --runs alike), alternating with EdgeLM's runs, and print both and their ratio.")
    Path llamaBench;

    @Option(names = "--compare-rounds", paramLabel = "N", defaultValue = "2",
            description = "With --compare-llama-bench: rounds of EdgeLM then llama-bench (default ${DEFAULT-VALUE}).")
    int compareRounds;

    @Override
    public Integer call() {
        if (prefillTokens < 1) {
            throw new EdgeLmException("-p/--prefill-tokens must be >= 1, got " + prefillTokens);
        }
        if (decodeTokens < 1) {
            throw new EdgeLmException("-d/--decode-tokens must be >= 1, got " + decodeTokens);
        }
        if (runs < 1) {
            throw new EdgeLmException("--runs must be >= 1, got " + runs);
        }
        int needed = Benchmark.tokensNeeded(prefillTokens, decodeTokens);
        EngineOptions options = EngineOptions.defaults()
                .withMaxNumTokens(maxNumTokens != null ? EngineOptions.checkContext(maxNumTokens, "--max-num-tokens") : needed);
        if (threads != null) {
            options = options.withThreads(EngineOptions.checkThreads(threads, "--threads"));
        }
        if (image != null && !Files.isRegularFile(image)) {
            throw new EdgeLmException(image + ": no such image file (--image)");
        }
        if (readLoopMib < 0 || readLoopMib > (1L << 20)) {
            throw new EdgeLmException("--read-loop-mib must be in 0..1048576, got " + readLoopMib);
        }
        if (compareRounds < 1 || compareRounds > 100) {
            throw new EdgeLmException("--compare-rounds must be in 1..100, got " + compareRounds);
        }
        if (llamaBench != null) {
            LlamaBench.check(llamaBench);
            if (parallel != null || image != null) {
                throw new EdgeLmException("--compare-llama-bench compares one-sequence text runs; give it without --parallel and --image");
            }
        }
        if (parallel != null && (image != null || mmproj != null)) {
            throw new EdgeLmException("--parallel measures text generation; give --image (or --mmproj) without it");
        }
        ModelResolver.Resolved resolved = source.resolve(model, main.context);
        PrintWriter err = spec.commandLine().getErr();
        err.println("benchmark: loading " + resolved.describe() + " ...");
        err.flush();
        if (parallel != null) {
            try (Engine engine = Engine.load(resolved.path(), options)) {
                BatchBenchmarkOutput.print(spec.commandLine().getOut(), engine,
                        BatchBenchmark.run(engine, parallel, prefillTokens, decodeTokens, runs), json);
            }
            return 0;
        }
        try (Engine engine = Engine.load(resolved.path(), options)) {
            VisionOptions.apply(engine, mmproj, imageMinPixels, imageMaxPixels, image != null);
            java.util.function.Consumer<String> progress = step -> {
                err.println("benchmark: " + step + (step.startsWith("measuring") ? " ..." : " (" + prefillTokens
                        + " prompt + " + decodeTokens + " decode tokens) ..."));
                err.flush();
            };
            int rounds = llamaBench == null ? 1 : compareRounds;
            java.util.List<Comparison.Round> compared = new java.util.ArrayList<>();
            Benchmark.Report report = null;
            ReadLoops.Figures loops = null;
            Benchmark.ImageReport imageReport = null;
            PeakMemory memory = null;
            for (int round = 0; round < rounds; round++) {
                if (llamaBench != null) {
                    err.println("benchmark: round " + (round + 1) + " of " + rounds + ": EdgeLM, then llama-bench");
                }
                report = Benchmark.run(engine, prefillTokens, decodeTokens, runs, progress);
                if (round == 0) {
                    // before the read loops, whose buffer is not the model's memory
                    imageReport = image == null ? null : Benchmark.image(engine, image, runs);
                    memory = PeakMemory.read();
                }
                if (readLoopMib > 0) {
                    progress.accept("measuring the native and plain Java read loops");
                    loops = ReadLoops.measure(main.context.env(), HubClient.defaultCache(main.context.env()),
                            engine.options().threads(), readLoopMib);
                }
                if (llamaBench != null) {
                    err.println("benchmark: running " + String.join(" ", LlamaBench.command(llamaBench, resolved.path(),
                            engine.options().threads(), prefillTokens, decodeTokens, runs)) + " ...");
                    err.flush();
                    LlamaBench.Result llama = LlamaBench.run(llamaBench, resolved.path(), engine.options().threads(),
                            prefillTokens, decodeTokens, runs);
                    compared.add(new Comparison.Round(report, loops, llama));
                }
            }
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                String text = BenchmarkJson.of(resolved, engine, report, memory);
                text = Comparison.addJson(text, loops, llamaBench, compared);
                if (imageReport != null) {
                    try {
                        ObjectNode o = (ObjectNode) new ObjectMapper().readTree(text);
                        Benchmark.ImageReport r = imageReport;
                        ObjectNode im = o.putObject("image");
                        im.put("file", image.toString());
                        im.put("patches", r.patches());
                        im.put("tokens", r.tokens());
                        im.put("vision_load_seconds", r.visionLoadSeconds());
                        im.put("preprocess_seconds", r.preprocessSeconds());
                        im.put("encode_seconds", r.encodeSeconds().median());
                        im.put("encode_seconds_min", r.encodeSeconds().min());
                        im.put("encode_seconds_max", r.encodeSeconds().max());
                        im.put("encode_first_run_seconds", r.firstEncodeSeconds());
                        text = o.toString();
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
                out.println(text);
            } else {
                printText(out, resolved, engine, report, memory);
                Comparison.printLoops(out, report, loops);
                if (llamaBench != null) {
                    Comparison.print(out, llamaBench, compared);
                }
                if (imageReport != null) {
                    Benchmark.ImageReport r = imageReport;
                    out.println("Image: " + image + ": " + r.patches() + " patches, " + r.tokens() + " tokens ("
                            + r.gridRows() + " x " + r.gridCols() + ")");
                    out.println(format("Vision tower load time: %.3f s, preprocessing: %.4f s", r.visionLoadSeconds(),
                            r.preprocessSeconds()));
                    out.println(format("Image encode time: %.4f s", r.encodeSeconds().median())
                            + " (median; min " + format("%.4f s", r.encodeSeconds().min()) + ", max "
                            + format("%.4f s", r.encodeSeconds().max()) + ")"
                            + format(", %.1f image tokens/sec", r.tokens() / r.encodeSeconds().median()));
                    out.println(format("Image encode time of the warm-up run: %.4f s", r.firstEncodeSeconds()));
                }
            }
            out.flush();
        }
        return 0;
    }

    private static void printText(PrintWriter out, ModelResolver.Resolved resolved, Engine engine, Benchmark.Report r,
                                  PeakMemory memory) {
        out.println("EdgeLM " + BuildInfo.version() + " (" + BuildInfo.commit() + "), " + MachineInfo.jvm()
                + ", Vector API " + BenchmarkJson.vectorBits() + "-bit");
        out.println("CPU: " + MachineInfo.cpuModel() + (MachineInfo.cpuFlags().isEmpty() ? ""
                : " (" + String.join(" ", MachineInfo.cpuFlags()) + ")"));
        out.println("Model: " + resolved.path() + " (" + Sizes.bytes(resolved.bytes()) + ", " + resolved.quant() + "; "
                + engine.config().numLayers() + " layers " + engine.config().layerPattern() + ", vocab "
                + engine.config().vocabSize() + ")");
        out.println("Threads: " + engine.options().threads());
        out.println("Prompt tokens: " + r.promptTokens() + ", decode tokens: " + r.decodeTokens()
                + ", runs: " + r.runs() + " (after 1 warm-up run)");
        out.println(format("Init time: %.3f s", engine.loadSeconds()));
        out.println(format("Time to first token: %.4f s", r.ttftSeconds().median()) + range(r.ttftSeconds(), "%.4f s"));
        out.println(format("Time to first token of the warm-up run (kernels still compiling): %.4f s", r.firstTtftSeconds()));
        out.println(format("Prefill speed: %.2f tokens/sec", r.prefillTokensPerSecond().median()) + range(r.prefillTokensPerSecond(), "%.2f"));
        out.println(format("Decode speed: %.2f tokens/sec", r.decodeTokensPerSecond().median()) + range(r.decodeTokensPerSecond(), "%.2f"));
        out.println(format("Decode weight traffic: %.1f MB per token, %.1f GB/s", r.decodeBytesPerToken() / 1e6,
                r.decodeBytesPerSecond() / 1e9));
        out.println(format("Memory read bandwidth: %.1f GB/s (same threads, measured after the runs); decode used %.0f%% of it",
                r.readBytesPerSecond() / 1e9, 100 * r.decodeBytesPerSecond() / r.readBytesPerSecond()));
        out.println(format("Peak memory: %.1f MiB", memory.bytes() / (1024.0 * 1024.0))
                + (memory.isRss() ? "" : " (JVM memory pools; resident set size unavailable)"));
    }

    private static String range(Benchmark.Stat s, String fmt) {
        return " (median; min " + format(fmt, s.min()) + ", max " + format(fmt, s.max()) + ")";
    }

    private static String format(String fmt, Object... values) {
        return String.format(Locale.ROOT, fmt, values);
    }
}
