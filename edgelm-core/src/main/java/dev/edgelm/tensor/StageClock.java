package dev.edgelm.tensor;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Clocks around the stages of a forward pass, for finding where prefill time goes: off unless the JVM runs with
 * {@code -Dedgelm.stageclock=true}, then every stage's nanoseconds and calls are summed while {@link #recording}
 * is on (the model turns it on for chunks of several tokens) and printed to standard error when the JVM exits.
 * Clocks, not samples: JFR's execution samples misplace time between the inlined kernels (see docs/kernels.md).
 *
 * <p>Stage names are free strings ({@code "mlp.down"}, {@code "gemm.tile"}); a thread's time inside a kernel is
 * summed per thread and added once per task, so the clocks cost a few {@code nanoTime} calls per tile.
 */
public final class StageClock {
    /** Whether the clocks exist at all ({@code -Dedgelm.stageclock=true}). */
    public static final boolean ON = Boolean.getBoolean("edgelm.stageclock");
    /**
     * Whether one-token chunks (decode steps) are measured instead of chunks of several tokens
     * ({@code -Dedgelm.stageclock.decode=true}, with the clocks on): the report is then per decode step.
     */
    public static final boolean DECODE = ON && Boolean.getBoolean("edgelm.stageclock.decode");
    /**
     * Whether the batched decode steps of several sequences ({@code Qwen35Model.forwardBatch}) are measured instead
     * ({@code -Dedgelm.stageclock.batch=true}, with the clocks on): the report is then per batched step, and
     * single-sequence forward calls are not measured.
     */
    public static final boolean BATCH = ON && Boolean.getBoolean("edgelm.stageclock.batch");
    /** The stage a whole measured chunk is added to. */
    private static final String CHUNK = BATCH ? "batch step" : DECODE ? "decode" : "prefill";
    private static final Map<String, LongAdder> NANOS = new ConcurrentHashMap<>();
    private static final Map<String, LongAdder> CALLS = new ConcurrentHashMap<>();
    /** Whether the current forward call is measured (set by the calling thread before its parallel sections). */
    private static volatile boolean recording;

    static {
        if (ON) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.print(report()), "edgelm-stageclock"));
        }
    }

    private StageClock() {}

    /** Starts or stops measuring (the model: on for chunks of several tokens, with {@link #DECODE} for decode steps only, with {@link #BATCH} for batched steps only). */
    public static void recording(boolean on) {
        if (ON && !Thread.currentThread().getName().startsWith("edgelm-primer")) { // the start-up primer's tiny model is not measured
            recording = on;
        }
    }

    /** Whether stages are being measured now. */
    public static boolean active() {
        return ON && recording;
    }

    /** Loaded on the first {@link #cpuNanos} call only, so that JMX stays off the start-up path when the clocks are off. */
    private static final class Threads {
        static final java.lang.management.ThreadMXBean MX = java.lang.management.ManagementFactory.getThreadMXBean();
    }

    /** CPU time of the calling thread, in nanoseconds (to tell time on the core from time descheduled). */
    public static long cpuNanos() {
        return Threads.MX.getCurrentThreadCpuTime();
    }

    /** A start time for {@link #stop}, or 0 when not measuring. */
    public static long start() {
        return active() ? System.nanoTime() : 0L;
    }

    /** Adds the time since {@code t0} (from {@link #start}) to {@code stage}. */
    public static void stop(String stage, long t0) {
        if (t0 != 0L && active()) {
            add(stage, System.nanoTime() - t0);
        }
    }

    /** Chunks still to drop ({@code -Dedgelm.stageclock.skip=N}, default 1: the warm-up chunk, kernels compiling). */
    private static int skip = Integer.getInteger("edgelm.stageclock.skip", 1);

    /**
     * Ends a measured chunk that started at {@code t0}: adds it to the stage {@code "prefill"} ({@code "decode"} with
     * {@link #DECODE}), or, for the first
     * {@code skip} chunks, drops everything summed so far. Stops recording.
     */
    public static synchronized void endChunk(long t0) {
        if (!active()) {
            return;
        }
        if (skip > 0) {
            skip--;
            NANOS.clear();
            CALLS.clear();
        } else {
            stop(CHUNK, t0);
        }
        recording = false;
    }

    /** Adds {@code nanos} and one call to {@code stage}. */
    public static void add(String stage, long nanos) {
        if (active()) {
            NANOS.computeIfAbsent(stage, k -> new LongAdder()).add(nanos);
            CALLS.computeIfAbsent(stage, k -> new LongAdder()).increment();
        }
    }

    /** Every stage: total milliseconds, calls and milliseconds per {@code "prefill"} call, sorted by name. */
    public static String report() {
        Map<String, Long> sorted = new TreeMap<>();
        NANOS.forEach((k, v) -> sorted.put(k, v.sum()));
        LongAdder chunks = CALLS.get(CHUNK);
        long p = chunks == null ? 1 : Math.max(1, chunks.sum());
        StringBuilder b = new StringBuilder("stage clock (" + p + (BATCH ? " batched steps" : DECODE ? " decode steps" : " chunks")
                + "; ms per chunk, calls per chunk):\n");
        sorted.forEach((k, v) -> b.append(String.format("  %-28s %9.2f ms %8d%n", k, v / 1e6 / p,
                CALLS.get(k).sum() / p)));
        return b.toString();
    }
}
