package dev.edgelm.engine;

import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.vision.PatchGrid;
import dev.edgelm.vision.VisionModel;
import dev.edgelm.model.Qwen35Weights;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.ReadBandwidth;
import dev.edgelm.tensor.quant.WorkingCopy;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Prefill and decode speed as LiteRT-LM's benchmark defines them: a synthetic prompt of exactly
 * {@code promptTokens} ids (drawn deterministically from the vocabulary, no chat template), then exactly
 * {@code decodeTokens} greedy decode steps that ignore stop tokens; one warm-up run, then {@code runs}
 * measured runs, each on a fresh session.
 *
 * <p>Per run: prefill time = the {@link Session#prefill} call; time to first token = from the start of the
 * prefill to the moment the first token is sampled; decode time = from the first sampled token to the
 * token sampled by the last decode step (each step = one forward pass on the previous token + sampling).
 *
 * <p>Each run starts after a full garbage collection (as JMH does between iterations), so that what an
 * earlier run left behind (a dropped session's state) is not collected during, or counted in, the next.
 *
 * <p>After the runs it reads every weight once per pass (five passes, the fastest counts) to measure the
 * machine's read bandwidth in the same minute, so that decode can be reported as a share of what memory
 * allows.
 */
public final class Benchmark {
    private Benchmark() {}

    /** Median, minimum and maximum over the runs. */
    public record Stat(double median, double min, double max) {
        static Stat of(double[] values) {
            double[] v = values.clone();
            Arrays.sort(v);
            int n = v.length;
            double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
            return new Stat(median, v[0], v[n - 1]);
        }
    }

    /**
     * Speeds in tokens per second, times in seconds. {@code decodeBytesPerToken}: weight bytes one decode
     * step reads; {@code readBytesPerSecond}: how fast the pool's threads read those weights with no other
     * work, measured right after the runs (see {@link ReadBandwidth}). {@code firstTtftSeconds}: the
     * warm-up run's time to first token, what a fresh process sees while the JIT compiles the kernels.
     */
    public record Report(int promptTokens, int decodeTokens, int runs, Stat prefillTokensPerSecond,
                         Stat decodeTokensPerSecond, Stat ttftSeconds, double firstTtftSeconds,
                         long decodeBytesPerToken, double readBytesPerSecond, Samples samples) {

        /** Weight bytes per second the median decode moved. */
        public double decodeBytesPerSecond() {
            return decodeTokensPerSecond.median() * decodeBytesPerToken;
        }
    }

    /** Every measured run's figures, in the order run (llama-bench's {@code samples_ts}). */
    public record Samples(double[] prefillTokensPerSecond, double[] decodeTokensPerSecond, double[] ttftSeconds,
                          double[] prefillSeconds, double[] decodeSeconds) {}

    /** One measured run. */
    record Run(double prefillSeconds, double ttftSeconds, double decodeSeconds) {}

    /** Context capacity a run needs: the prompt, the decode steps and the last token sampled. */
    /**
     * Image encoding: the preprocessing once, then the vision tower on it in one warm-up and {@code runs} measured
     * runs (seconds each).
     */
    public record ImageReport(int patches, int tokens, int gridRows, int gridCols, double visionLoadSeconds,
                              double preprocessSeconds, double firstEncodeSeconds, Stat encodeSeconds) {}

    public static ImageReport image(Engine engine, Object image, int runs) {
        VisionModel vision = engine.vision();
        long t0 = System.nanoTime();
        PatchGrid.Pixels pixels = engine.preprocessImage(image);
        double preprocess = (System.nanoTime() - t0) / 1e9;
        double[] seconds = new double[runs];
        double first = 0;
        ImageEmbedding e = null;
        for (int i = -1; i < runs; i++) {
            long s = System.nanoTime();
            e = Engine.embedding(vision, engine.config().hiddenSize(), pixels);
            double took = (System.nanoTime() - s) / 1e9;
            if (i < 0) {
                first = took;
            } else {
                seconds[i] = took;
            }
        }
        return new ImageReport(pixels.grid().patches(), e.tokens(), e.gridRows(), e.gridCols(), engine.visionLoadSeconds(),
                preprocess, first, Stat.of(seconds));
    }

    public static int tokensNeeded(int promptTokens, int decodeTokens) {
        long needed = (long) promptTokens + decodeTokens + 1;
        if (needed > EngineOptions.MAX_CONTEXT_TOKENS) {
            throw new EdgeLmException(promptTokens + " prompt + " + decodeTokens + " decode tokens need " + needed
                    + " positions, more than the " + EngineOptions.MAX_CONTEXT_TOKENS + " a sequence may hold");
        }
        return (int) needed;
    }

    /** The synthetic prompt: {@code n} ids, the same for a given vocabulary size. */
    public static int[] syntheticPrompt(int n, int vocab) {
        SplittableRandom random = new SplittableRandom(0x5EED);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = random.nextInt(vocab);
        }
        return ids;
    }

    public static Report run(Engine engine, int promptTokens, int decodeTokens, int runs) {
        return run(engine, promptTokens, decodeTokens, runs, step -> { });
    }

    /** As {@link #run(Engine, int, int, int)}, telling {@code progress} each step as it starts ("run 1 of 3"). */
    public static Report run(Engine engine, int promptTokens, int decodeTokens, int runs, java.util.function.Consumer<String> progress) {
        if (promptTokens < 1 || decodeTokens < 1 || runs < 1) {
            throw new EdgeLmException("benchmark needs at least 1 prompt token, 1 decode token and 1 run (got "
                    + promptTokens + ", " + decodeTokens + ", " + runs + ")");
        }
        int needed = tokensNeeded(promptTokens, decodeTokens);
        if (engine.options().maxNumTokens() < needed) {
            throw new EdgeLmException("max number of tokens " + engine.options().maxNumTokens() + " is too small for "
                    + promptTokens + " prompt + " + decodeTokens + " decode tokens: at least " + needed + " needed");
        }
        int[] prompt = syntheticPrompt(promptTokens, engine.config().vocabSize());
        System.gc();
        progress.accept("warm-up run");
        Run warmUp = runOnce(engine, prompt, decodeTokens);
        double[] prefill = new double[runs];
        double[] decode = new double[runs];
        double[] ttft = new double[runs];
        double[] prefillSeconds = new double[runs];
        double[] decodeSeconds = new double[runs];
        for (int i = 0; i < runs; i++) {
            System.gc();
            progress.accept("run " + (i + 1) + " of " + runs);
            Run r = runOnce(engine, prompt, decodeTokens);
            prefill[i] = promptTokens / r.prefillSeconds();
            decode[i] = decodeTokens / r.decodeSeconds();
            ttft[i] = r.ttftSeconds();
            prefillSeconds[i] = r.prefillSeconds();
            decodeSeconds[i] = r.decodeSeconds();
        }
        progress.accept("measuring the memory read bandwidth");
        Qwen35Weights weights = engine.model().weights();
        // the bytes decode reads: a matrix's working copy where it made one (its file bytes may be released)
        List<MemorySegment> storage = weights.matrices().stream()
                .map(m -> m instanceof WorkingCopy w ? w.workingStorage() : m.storage()).toList();
        double bandwidth;
        try (Parallel pool = new Parallel(engine.options().threads())) {
            bandwidth = ReadBandwidth.bytesPerSecond(pool, storage, 5);
        }
        return new Report(promptTokens, decodeTokens, runs, Stat.of(prefill), Stat.of(decode), Stat.of(ttft),
                warmUp.ttftSeconds(), weights.decodeBytesPerToken(), bandwidth,
                new Samples(prefill, decode, ttft, prefillSeconds, decodeSeconds));
    }

    static Run runOnce(Engine engine, int[] prompt, int decodeTokens) {
        Session session = engine.newSession();
        // decodeTokens steps after the first token: decodeTokens + 1 tokens sampled
        GenerationOptions greedy = GenerationOptions.builder().maxNewTokens(decodeTokens + 1).build();
        long[] sampledAt = new long[2];
        GenerationListener clock = new GenerationListener() {
            private int n;

            @Override
            public void onToken(int id) {
                long now = System.nanoTime();
                if (n++ == 0) {
                    sampledAt[0] = now;
                }
                sampledAt[1] = now;
            }
        };
        long start = System.nanoTime();
        session.prefill(prompt);
        long prefilled = System.nanoTime();
        GenerationResult result = session.generate(greedy, clock);
        if (result.tokens().length != decodeTokens + 1 || session.tokensPrefilled() != prompt.length) {
            throw new IllegalStateException("benchmark run did " + session.tokensPrefilled() + " prefill tokens and "
                    + result.tokens().length + " sampled tokens");
        }
        return new Run((prefilled - start) / 1e9, (sampledAt[0] - start) / 1e9, (sampledAt[1] - sampledAt[0]) / 1e9);
    }
}
