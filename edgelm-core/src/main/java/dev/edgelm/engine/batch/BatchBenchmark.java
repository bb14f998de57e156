package dev.edgelm.engine.batch;

import dev.edgelm.engine.Benchmark;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Sampler;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code edgelm benchmark --parallel N,...}: the batched engine without HTTP, in the shape of llama.cpp's
 * {@code llama-batched-bench}. Per run and N: a fresh {@link BatchScheduler} with N slots and no prefix
 * cache, N requests submitted at once, each a synthetic prompt of {@code p} ids (sequence i of run r gets
 * the same prompt whatever N) and {@code d} greedy decode steps that ignore stop tokens ({@code d + 1}
 * tokens sampled, the first one from the prompt's logits). One warm-up round over every N, then the runs,
 * N alternating within each run.
 *
 * <ul>
 *   <li>aggregate decode = N x d / time spent in decode steps (the batched forward pass and the sampling);</li>
 *   <li>aggregate prefill = N x p / time spent in prefill chunks;</li>
 *   <li>throughput = N x (d + 1) tokens / wall time from the submissions to the last token;</li>
 *   <li>per sequence: decode = d / time from its first to its last token (other sequences' prefill chunks,
 *       interleaved, included); time to first token from its submission (waiting for a slot and for the
 *       prefill of the sequences ahead of it included).</li>
 *   <li>lockstep decode = N x d / time of d batched steps of all N sequences, after all N were prefilled
 *       ({@link #lockstep}): no ramp-up or drain, the shape {@code llama-batched-bench} times as S_TG.</li>
 * </ul>
 * The tokens of sequence i of a run must be the same for every N and in lockstep (each sequence is computed as if
 * alone), and sequence 0's must be those of the single-stream {@code Session} run on the same prompt;
 * {@link Report#mismatches()} counts the sequences (run, index) where any of these differ, each once.
 */
public final class BatchBenchmark {
    private BatchBenchmark() {}

    /** Figures for one N over the runs (per-sequence figures: over every sequence of every run). */
    public record Row(int parallel, Benchmark.Stat aggregateDecode, Benchmark.Stat aggregatePrefill,
                      Benchmark.Stat throughput, Benchmark.Stat sequenceDecode, Benchmark.Stat ttftSeconds,
                      Benchmark.Stat decodePerCpuSecond, Benchmark.Stat lockstepDecode,
                      Benchmark.Stat lockstepDecodePerCpuSecond) {}

    /**
     * {@code sessionDecode}: a single-stream {@code Session} (prefill, then d decode steps) measured in the same
     * rounds, tokens per second and per CPU-second of the process, for the ratios.
     */
    public record Report(int promptTokens, int decodeTokens, int runs, List<Row> rows, int mismatches,
                         Benchmark.Stat sessionDecode, Benchmark.Stat sessionDecodePerCpuSecond) {}

    public static Report run(Engine engine, List<Integer> parallel, int promptTokens, int decodeTokens, int runs) {
        if (parallel.isEmpty()) {
            throw new EdgeLmException("--parallel needs at least one value");
        }
        for (int n : parallel) {
            if (n < 1) {
                throw new EdgeLmException("--parallel values must be >= 1, got " + n);
            }
        }
        int context = Benchmark.tokensNeeded(promptTokens, decodeTokens);
        if (context > engine.options().maxNumTokens()) {
            throw new EdgeLmException("a sequence needs " + context + " tokens, the context capacity is "
                    + engine.options().maxNumTokens());
        }
        Map<Integer, List<double[]>> perN = new HashMap<>();
        Map<String, int[]> tokensBySequence = new HashMap<>();
        Set<String> mismatched = new HashSet<>();
        List<double[]> session = new ArrayList<>();
        for (int run = -1; run < runs; run++) {
            Alone alone = sessionOnce(engine, promptTokens, decodeTokens, Math.max(run, 0));
            if (run >= 0) {
                session.add(alone.figures());
                tokensBySequence.put(run + "/0", alone.tokens());
            }
            for (int n : parallel) {
                Measured m = once(engine, n, promptTokens, decodeTokens, context, Math.max(run, 0));
                if (run < 0) {
                    continue; // warm-up
                }
                perN.computeIfAbsent(n, k -> new ArrayList<>()).add(m.figures);
                for (int i = 0; i < n; i++) {
                    int[] prev = tokensBySequence.putIfAbsent(run + "/" + i, m.tokens[i]);
                    if (prev != null && !Arrays.equals(prev, m.tokens[i])) {
                        mismatched.add(run + "/" + i);
                    }
                }
                perN.computeIfAbsent(-n, k -> new ArrayList<>()).add(m.sequenceDecode);
                perN.computeIfAbsent(-1000 - n, k -> new ArrayList<>()).add(m.ttft);
                Measured lock = lockstep(engine, n, promptTokens, decodeTokens, context, run);
                perN.computeIfAbsent(-2000 - n, k -> new ArrayList<>()).add(lock.figures);
                for (int i = 0; i < n; i++) {
                    if (!Arrays.equals(m.tokens[i], lock.tokens[i])) {
                        mismatched.add(run + "/" + i);
                    }
                }
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int n : parallel) {
            List<double[]> f = perN.get(n);
            List<double[]> lock = perN.get(-2000 - n);
            rows.add(new Row(n, stat(f, 0), stat(f, 1), stat(f, 2), flat(perN.get(-n)), flat(perN.get(-1000 - n)), stat(f, 3),
                    stat(lock, 0), stat(lock, 1)));
        }
        return new Report(promptTokens, decodeTokens, runs, rows, mismatched.size(), stat(session, 0), stat(session, 1));
    }

    private record Alone(double[] figures, int[] tokens) {}

    /**
     * Sequence 0's prompt on a fresh session: d decode steps per second and per CPU-second of the process, and its
     * d + 1 tokens (what every batched run of sequence 0 must produce).
     */
    private static Alone sessionOnce(Engine engine, int p, int d, int run) {
        int[] prompt = new SplittableRandom(0x5EED + 1000L * run).ints(p, 0, engine.config().vocabSize()).toArray();
        dev.edgelm.engine.Session s = engine.newSession();
        s.prefill(prompt);
        long c0 = cpuNanos();
        long t0 = System.nanoTime();
        GenerationResult r = s.generate(GenerationOptions.builder().maxNewTokens(d + 1).build());
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = (cpuNanos() - c0) / 1e9;
        if (r.tokens().length != d + 1) {
            throw new IllegalStateException("the single-stream run produced " + r.tokens().length + " tokens");
        }
        return new Alone(new double[] {d / seconds, cpu > 0 ? d / cpu : Double.NaN}, r.tokens());
    }

    private static long cpuNanos() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean sun ? Math.max(0, sun.getProcessCpuTime()) : 0;
    }

    private record Measured(double[] figures, double[] sequenceDecode, double[] ttft, int[][] tokens) {}

    private static Measured once(Engine engine, int n, int p, int d, int context, int run) {
        int vocab = engine.config().vocabSize();
        GenerationOptions options = GenerationOptions.builder().maxNewTokens(d + 1).build();
        Generation[] gens = new Generation[n];
        BatchStats stats;
        try (BatchScheduler s = new BatchScheduler(engine, new BatchOptions(n, context, 0, engine.options().prefillChunk()))) {
            for (int i = 0; i < n; i++) {
                int[] prompt = new SplittableRandom(0x5EED + 1000L * run + i).ints(p, 0, vocab).toArray();
                gens[i] = s.submit(new GenerationRequest(prompt, options, null, null));
            }
            for (Generation g : gens) {
                g.join();
            }
            stats = s.stats();
        }
        long first = Long.MAX_VALUE;
        long last = 0;
        double[] seqDecode = new double[n];
        double[] ttft = new double[n];
        int[][] tokens = new int[n][];
        for (int i = 0; i < n; i++) {
            Generation g = gens[i];
            GenerationResult r = g.join();
            if (r.tokens().length != d + 1) {
                throw new IllegalStateException("a benchmark sequence produced " + r.tokens().length + " tokens, expected " + (d + 1));
            }
            tokens[i] = r.tokens();
            first = Math.min(first, g.submittedAtNanos());
            last = Math.max(last, g.finishedAtNanos());
            seqDecode[i] = d / ((g.finishedAtNanos() - g.firstTokenAtNanos()) / 1e9);
            ttft[i] = (g.firstTokenAtNanos() - g.submittedAtNanos()) / 1e9;
        }
        double[] figures = {
            (double) n * d / stats.decodeSeconds(),
            (double) n * p / stats.prefillSeconds(),
            (double) n * (d + 1) / ((last - first) / 1e9),
            stats.decodeCpuSeconds() > 0 ? (double) n * d / stats.decodeCpuSeconds() : Double.NaN,
        };
        return new Measured(figures, seqDecode, ttft, tokens);
    }

    /**
     * The same N prompts as {@link #once} in lockstep, without the scheduler: each prefilled on its own state in the
     * scheduler's chunks (multiples of the prefill chunk and of the default snapshot interval) and its first token
     * sampled, then d batched steps of all N ({@link Qwen35Model#forwardBatch}, then each sequence's sampler), timed
     * together: figures {N x d / seconds, N x d / CPU-seconds}, and the tokens (which must be the scheduler's).
     */
    private static Measured lockstep(Engine engine, int n, int p, int d, int context, int run) {
        Qwen35Model model = engine.model();
        int vocab = engine.config().vocabSize();
        int chunk = engine.options().prefillChunk();
        int interval = BatchOptions.DEFAULT_SNAPSHOT_INTERVAL;
        GenerationOptions options = GenerationOptions.builder().maxNewTokens(d + 1).build();
        SequenceState[] states = new SequenceState[n];
        Sampler[] samplers = new Sampler[n];
        int[][] tokens = new int[n][d + 1];
        int[] next = new int[n];
        float[] logits = new float[Math.multiplyExact(n, vocab)];
        float[] one = new float[vocab];
        for (int i = 0; i < n; i++) {
            int[] prompt = new SplittableRandom(0x5EED + 1000L * run + i).ints(p, 0, vocab).toArray();
            states[i] = model.newState(context);
            for (int from = 0; from < p; ) {
                int end = Math.min(p, Math.min((from / chunk + 1) * chunk, (from / interval + 1) * interval));
                if (end == p) {
                    model.forwardLast(states[i], prompt, from, end - from, one);
                } else {
                    model.forward(states[i], prompt, from, end - from, Qwen35Model.Logits.NONE);
                }
                from = end;
            }
            samplers[i] = new Sampler(options, vocab, 0);
            samplers[i].observeContext(prompt, 0, p);
            next[i] = samplers[i].sample(one);
            samplers[i].accept(next[i]);
            tokens[i][0] = next[i];
        }
        long c0 = cpuNanos();
        long t0 = System.nanoTime();
        for (int step = 1; step <= d; step++) {
            model.forwardBatch(states, next, logits);
            for (int i = 0; i < n; i++) {
                System.arraycopy(logits, i * vocab, one, 0, vocab);
                next[i] = samplers[i].sample(one);
                samplers[i].accept(next[i]);
                tokens[i][step] = next[i];
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = (cpuNanos() - c0) / 1e9;
        double[] figures = {(double) n * d / seconds, cpu > 0 ? (double) n * d / cpu : Double.NaN};
        return new Measured(figures, null, null, tokens);
    }

    private static Benchmark.Stat stat(List<double[]> runs, int column) {
        double[] v = new double[runs.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = runs.get(i)[column];
        }
        return of(v);
    }

    private static Benchmark.Stat flat(List<double[]> runs) {
        return of(runs.stream().flatMapToDouble(Arrays::stream).toArray());
    }

    private static Benchmark.Stat of(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        return new Benchmark.Stat(median, v[0], v[n - 1]);
    }
}
