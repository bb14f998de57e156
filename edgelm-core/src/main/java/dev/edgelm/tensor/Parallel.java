package dev.edgelm.tensor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed pool of worker threads that splits an index range evenly among itself and the calling thread.
 *
 * <p>Dispatch creates one small section object: the caller publishes it, bumps a generation counter and
 * every worker starts on slice {@code i} of {@code n}, in chunks that a thread done early may take over. Waiting threads spin briefly, then yield,
 * then (workers only) park. Spinning first, because a forward pass issues thousands of small parallel
 * sections back to back and a park/unpark round trip (~10-50 us) would dominate decode of a small model;
 * yielding next, because when other processes compete for the cores a spinning waiter would otherwise
 * burn the time slice of the very thread it waits for (measured on 2 busy cores: tiny-model decode fell
 * from ~2500 to ~22 tokens/s with pure spin-then-park).
 */
public final class Parallel implements AutoCloseable {

    /** Work on the half-open range {@code [start, end)}. */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end);
    }

    private static final int SPIN_ITERATIONS = 2_000;
    private static final int YIELD_ITERATIONS = 200;

    private final int threads;
    private final Thread[] workers;
    private volatile Job job;
    private final AtomicInteger generation = new AtomicInteger();
    private volatile boolean closed;

    public Parallel(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        this.threads = threads;
        this.workers = new Thread[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            final int slice = i + 1;
            Thread t = new Thread(() -> workerLoop(slice), "edgelm-worker-" + slice);
            t.setDaemon(true);
            workers[i] = t;
            t.start();
        }
    }

    public int threads() {
        return threads;
    }

    /**
     * Sections cheaper than this many multiply-adds run on the calling thread: waking a worker costs about
     * a microsecond on an idle machine and far more on a busy one, the time of ~10^4-10^5 FMAs.
     */
    public static final long MIN_PARALLEL_COST = 1L << 15;

    /** As {@link #forRange(int, int, RangeTask)}, inline when {@code cost} (multiply-adds) is small. */
    public void forRange(int n, int align, long cost, RangeTask task) {
        if (cost < MIN_PARALLEL_COST) {
            if (n > 0) {
                long t0 = StageClock.start();
                task.run(0, n);
                StageClock.stop("pool.inline", t0);
            }
            return;
        }
        forRange(n, align, task, cost);
    }

    /**
     * Multiply-adds per chunk that {@link #forRange(int, int, long, RangeTask)} aims at ({@code
     * -Dedgelm.pool.chunkcost=N}; 0: always {@value #CHUNKS_PER_SLICE} chunks per slice, as before). About 128 K
     * multiply-adds, ~128 KB of int8 weights, 5-10 us on one thread streaming from memory: the caller's wait at
     * the end of a section is for a chunk still running elsewhere, half a chunk on average, so chunks of an eighth
     * of a slice left ~30 us per decode section waiting (2B Q8_0: ~7 % of a token, docs/lab/decode-bandwidth.md).
     */
    private static volatile long chunkCost = Long.getLong("edgelm.pool.chunkcost", 1L << 17);

    /** The most chunks per slice: each costs one claim on the slice's own counter. */
    static final int MAX_CHUNKS_PER_SLICE = 64;

    /** Chunks per slice for a section of {@code cost} multiply-adds split between {@code threads}. */
    static int chunksPerSlice(long cost, int threads) {
        long unit = chunkCost; // not final: the bench DecodeAB switches it between runs
        if (unit <= 0) {
            return CHUNKS_PER_SLICE;
        }
        long perSlice = cost / threads / unit;
        return (int) Math.max(CHUNKS_PER_SLICE, Math.min(MAX_CHUNKS_PER_SLICE, perSlice));
    }

    /** Runs {@code task} over {@code [0, n)} split into {@link #threads()} contiguous slices. */
    public void forRange(int n, RangeTask task) {
        forRange(n, 1, task);
    }

    /**
     * Like {@link #forRange(int, RangeTask)}, with slice boundaries rounded to multiples of {@code align}
     * (for kernels that process rows in tiles). Not re-entrant: a task must not call the pool again.
     *
     * <p>Each thread's slice is cut into up to {@value #CHUNKS_PER_SLICE} contiguous chunks, which its owner
     * runs in order (one forward stream through its rows, as with a single slice); a thread that has finished
     * its own slice takes the chunks nobody has started from the others' slices. So the caller never waits
     * for a worker that has not been scheduled yet: on a machine whose cores are shared with other processes
     * a woken worker can take milliseconds to run, and with one fixed slice per thread every section waited
     * for it (measured: 2-thread decode matvecs at a quarter of the 1-thread speed under load; see
     * docs/lab/decode-bandwidth.md). The caller only waits for chunks already running elsewhere.
     */
    public void forRange(int n, int align, RangeTask task) {
        forRange(n, align, task, -1L);
    }

    /** A section of {@code cost} multiply-adds ({@code -1}: unknown), or, inside {@link #fused}, a part of one. */
    private synchronized void forRange(int n, int align, RangeTask task, long cost) {
        if (n <= 0) {
            return;
        }
        if (threads == 1 || n <= align) {
            task.run(0, n);
            return;
        }
        if (deferred != null) {
            deferred.add(new Part(n, align, task, cost));
            return;
        }
        run(task, n, align, cost < 0 ? CHUNKS_PER_SLICE : chunksPerSlice(cost, threads));
    }

    /** The sections {@link #fused}'s body starts, collected by the thread that runs it; null outside. */
    private ArrayList<Part> deferred;

    /** One section started inside {@link #fused}. */
    private record Part(int n, int align, RangeTask task, long cost) {}

    /**
     * Runs {@code body} and the parallel sections it starts as one section: each {@code forRange} inside it
     * (other than those it runs on the calling thread, as below {@link #MIN_PARALLEL_COST}) only records its
     * range, and when the body returns the ranges run together, laid end to end and split between the threads
     * as one range is (contiguous slices, each thread's chunks in order, a thread done early taking the others'
     * unstarted chunks). For independent pieces of work that read the same input, e.g. the projections of one
     * decode step from the same normalised hidden state: one hand-off, one wait at the end and one tail
     * instead of one per matrix.
     *
     * <p>The body must not depend on what its sections compute (they have not run when it returns), and what a
     * section reads must stay as it was when the section was started until the body returns. Each index of
     * each section still runs exactly once, on one thread, with the same code, so results are the same bits.
     */
    public synchronized void fused(Runnable body) {
        if (threads == 1 || deferred != null) {
            body.run();
            return;
        }
        ArrayList<Part> parts = new ArrayList<>(4);
        deferred = parts;
        try {
            body.run();
        } finally {
            deferred = null;
        }
        if (parts.size() == 1) {
            Part p = parts.get(0);
            forRange(p.n, p.align, p.task, p.cost);
            return;
        }
        if (parts.isEmpty()) {
            return;
        }
        // Parts end to end in units of their own alignment: a chunk boundary is a unit boundary of each part.
        int[] first = new int[parts.size() + 1];
        long cost = 0;
        for (int i = 0; i < parts.size(); i++) {
            Part p = parts.get(i);
            first[i + 1] = first[i] + (p.n + p.align - 1) / p.align;
            cost += Math.max(0L, p.cost);
        }
        RangeTask all = (u0, u1) -> {
            for (int i = 0; i < first.length - 1 && first[i] < u1; i++) {
                int from = Math.max(u0, first[i]);
                int to = Math.min(u1, first[i + 1]);
                if (from < to) {
                    Part p = parts.get(i);
                    p.task.run((from - first[i]) * p.align, Math.min(p.n, (to - first[i]) * p.align));
                }
            }
        };
        run(all, first[parts.size()], 1, chunksPerSlice(cost, threads));
    }

    /** Whether {@link #fused} is collecting sections on this pool now (sections then run after its body). */
    public boolean fusing() {
        return deferred != null;
    }

    private void run(RangeTask task, int n, int align, int chunksPerSlice) {
        Job job = new Job(task, n, align, threads, chunksPerSlice, Thread.currentThread());
        this.job = job;
        generation.incrementAndGet();
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
        boolean clocked = StageClock.active();
        long t0 = clocked ? System.nanoTime() : 0L;
        job.work(0);
        long t1 = clocked ? System.nanoTime() : 0L;
        int spins = 0;
        while (job.remaining.get() != 0) {
            if (++spins < SPIN_ITERATIONS) {
                Thread.onSpinWait();
            } else if (spins < SPIN_ITERATIONS + YIELD_ITERATIONS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(this, 20_000);
            }
        }
        this.job = null;
        if (clocked && job.workerNanos != null) {
            long t2 = System.nanoTime();
            StageClock.add("pool.caller.work", t1 - t0);
            StageClock.add("pool.caller.wait", t2 - t1);
            StageClock.add("pool.worker.work", job.workerNanos.sum());
        }
        Throwable f = job.failure;
        if (f != null) {
            if (f instanceof RuntimeException re) {
                throw re;
            }
            if (f instanceof Error e) {
                throw e;
            }
            throw new RuntimeException(f);
        }
    }

    /**
     * Chunks per thread's slice at least (and for sections of unknown cost): enough to rebalance a late thread's
     * share, few enough to keep streams long.
     */
    static final int CHUNKS_PER_SLICE = 8;

    /** Ints between two slices' counters: each on its own cache line, so that one thread's claims do not evict the other's. */
    private static final int PAD = 16;

    /**
     * One parallel section: slice {@code s} of {@code threads} holds {@code chunks[s]} chunks, handed out in
     * order by {@code cursor[s]}. A chunk runs once: claims past the end fail, so a thread that arrives after
     * the section is over (a late worker) finds nothing to do and never calls the task.
     */
    private static final class Job {
        final RangeTask task;
        final int n;
        final int align;
        final int threads;
        final int units;
        final int[] chunks;
        final AtomicIntegerArray cursor;
        final AtomicInteger remaining;
        final Thread waiter;
        volatile Throwable failure;
        /** The workers' time in this section's chunks, when the stage clocks run (null otherwise: no cost per section). */
        final java.util.concurrent.atomic.LongAdder workerNanos =
                StageClock.active() ? new java.util.concurrent.atomic.LongAdder() : null;

        Job(RangeTask task, int n, int align, int threads, int chunksPerSlice, Thread waiter) {
            this.task = task;
            this.n = n;
            this.align = align;
            this.threads = threads;
            this.units = (n + align - 1) / align;
            this.chunks = new int[threads];
            int total = 0;
            for (int s = 0; s < threads; s++) {
                chunks[s] = Math.min(chunksPerSlice, sliceUnit(s + 1) - sliceUnit(s));
                total += chunks[s];
            }
            this.cursor = new AtomicIntegerArray(threads * PAD);
            this.remaining = new AtomicInteger(total);
            this.waiter = waiter;
        }

        private int sliceUnit(int s) {
            return (int) ((long) units * s / threads);
        }

        /** Runs the chunks thread {@code slice} can claim: its own slice first, then the others' leftovers. */
        void work(int slice) {
            int done = 0; // chunks finished here, counted off {@code remaining} once at the end (one shared write per thread)
            for (int k = 0; k < threads; k++) {
                int s = (slice + k) % threads;
                int count = chunks[s];
                while (true) {
                    // read first, so that a finished slice's counter stops growing
                    int j = cursor.get(s * PAD) < count ? cursor.getAndIncrement(s * PAD) : count;
                    if (j >= count) {
                        break;
                    }
                    int from = sliceUnit(s);
                    int len = sliceUnit(s + 1) - from;
                    int start = Math.min(n, (from + (int) ((long) len * j / count)) * align);
                    int end = Math.min(n, (from + (int) ((long) len * (j + 1) / count)) * align);
                    long c0 = workerNanos != null && slice != 0 ? System.nanoTime() : 0L;
                    try {
                        if (start < end && failure == null) {
                            task.run(start, end);
                        }
                    } catch (Throwable t) {
                        failure = t;
                    } finally {
                        if (c0 != 0L) {
                            workerNanos.add(System.nanoTime() - c0); // before the count: the caller reads it after
                        }
                        done++;
                    }
                }
            }
            // Every chunk this thread claimed has finished; nothing is left to claim. The caller returns once
            // every thread that ran a chunk has counted it here.
            if (done > 0 && remaining.addAndGet(-done) == 0) {
                LockSupport.unpark(waiter);
            }
        }
    }

    private void workerLoop(int slice) {
        int seen = 0;
        while (!closed) {
            int spins = 0;
            while (generation.get() == seen && !closed) {
                if (++spins < SPIN_ITERATIONS) {
                    Thread.onSpinWait();
                } else if (spins < SPIN_ITERATIONS + YIELD_ITERATIONS) {
                    Thread.yield();
                } else {
                    LockSupport.park(this);
                }
            }
            if (closed) {
                return;
            }
            seen = generation.get();
            Job current = job; // the newest section (or none): taking part in a finished one does nothing
            if (current != null) {
                current.work(slice);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
    }

    /**
     * Physical cores visible to this process: distinct (package, core) pairs in /proc/cpuinfo, capped by
     * the processors the JVM may use. Hyper-threads share one core's vector units, so a matvec gains
     * nothing from them. Falls back to {@link Runtime#availableProcessors()} where cpuinfo is unavailable.
     */
    public static int physicalCores() {
        int available = Runtime.getRuntime().availableProcessors();
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            Set<String> cores = new HashSet<>();
            String physical = "0";
            for (String line : lines) {
                if (line.startsWith("physical id")) {
                    physical = line.substring(line.indexOf(':') + 1).trim();
                } else if (line.startsWith("core id")) {
                    cores.add(physical + "/" + line.substring(line.indexOf(':') + 1).trim());
                }
            }
            if (cores.isEmpty()) {
                return available;
            }
            return Math.max(1, Math.min(available, cores.size()));
        } catch (Exception e) {
            return available;
        }
    }
}
