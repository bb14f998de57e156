package dev.edgelm.tensor;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How the prefill GEMMs hand their rows to the threads: guided self-scheduling over one {@link Parallel} section.
 * Each thread takes {@code max(minimum, left / (2 * threads))} row tiles at a time from a shared counter, so the
 * pieces shrink as the matmul nears its end and the last thread to finish runs a few tiles past the others, not
 * a whole chunk of its slice ({@link Parallel#forRange(int, int, RangeTask)} cuts each thread's slice into 8
 * fixed chunks: the caller waited on average half a chunk, a 32nd of every section, for the other thread).
 *
 * <p>A row's result does not depend on which range it falls in (every kernel computes each output from its row
 * and token alone), so results are bit-identical to the fixed slices. {@code -Dedgelm.gemm.guided=false} keeps the
 * fixed slices, for measuring.
 */
public final class GuidedRows {
    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("edgelm.gemm.guided", "true"));

    private GuidedRows() {}

    /**
     * Runs {@code task} over {@code [0, n)} in ranges that start at multiples of {@code align} (and, but for the last,
     * end at one), at least {@code minUnits} units of {@code align} long while enough are left.
     */
    public static void forRange(Parallel pool, int n, int align, int minUnits, long cost, Parallel.RangeTask task) {
        int threads = pool.threads();
        int units = (n + align - 1) / align;
        if (!ENABLED || threads == 1 || cost < Parallel.MIN_PARALLEL_COST || units <= 2 * threads) {
            pool.forRange(n, align, cost, task);
            return;
        }
        AtomicInteger next = new AtomicInteger();
        int min = Math.max(1, minUnits);
        int parts = 2 * threads;
        // One unit per thread: whichever thread runs a unit pulls ranges until none are left (a late worker finds
        // none and returns at once).
        pool.forRange(threads, 1, (s, e) -> {
            while (true) {
                int u = next.get();
                int left = units - u;
                if (left <= 0) {
                    return;
                }
                int grab = Math.min(left, Math.max(min, left / parts));
                if (next.compareAndSet(u, u + grab)) {
                    task.run(u * align, Math.min(n, (u + grab) * align));
                }
            }
        });
    }
}
