package dev.edgelm.tensor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed pool of worker threads that splits an index range evenly among itself and the calling thread.
 *
 * <p>Dispatch creates no task objects: the caller publishes one {@link RangeTask}, bumps a generation
 * counter and every worker takes slice {@code i} of {@code n}. Waiting threads spin briefly, then yield,
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
    private volatile RangeTask task;
    private volatile int taskSize;
    private volatile int granularity;
    private final AtomicInteger generation = new AtomicInteger();
    private final AtomicInteger pending = new AtomicInteger();
    private volatile boolean closed;
    private volatile Throwable failure;
    private volatile Thread waiter;

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
                task.run(0, n);
            }
            return;
        }
        forRange(n, align, task);
    }

    /** Runs {@code task} over {@code [0, n)} split into {@link #threads()} contiguous slices. */
    public void forRange(int n, RangeTask task) {
        forRange(n, 1, task);
    }

    /**
     * Like {@link #forRange(int, RangeTask)}, with slice boundaries rounded to multiples of {@code align}
     * (for kernels that process rows in tiles). Not re-entrant: a task must not call the pool again.
     */
    public synchronized void forRange(int n, int align, RangeTask task) {
        if (n <= 0) {
            return;
        }
        if (threads == 1 || n <= align) {
            task.run(0, n);
            return;
        }
        this.task = task;
        this.taskSize = n;
        this.granularity = align;
        this.failure = null;
        this.waiter = Thread.currentThread();
        pending.set(workers.length);
        generation.incrementAndGet();
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
        runSlice(0, task, n, align);
        int spins = 0;
        while (pending.get() != 0) {
            if (++spins < SPIN_ITERATIONS) {
                Thread.onSpinWait();
            } else if (spins < SPIN_ITERATIONS + YIELD_ITERATIONS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(this, 20_000);
            }
        }
        this.task = null;
        Throwable f = failure;
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

    private void runSlice(int slice, RangeTask task, int n, int align) {
        int units = (n + align - 1) / align;
        int startUnit = (int) ((long) units * slice / threads);
        int endUnit = (int) ((long) units * (slice + 1) / threads);
        int start = Math.min(n, startUnit * align);
        int end = Math.min(n, endUnit * align);
        if (start < end) {
            task.run(start, end);
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
            try {
                runSlice(slice, task, taskSize, granularity);
            } catch (Throwable t) {
                failure = t;
            } finally {
                if (pending.decrementAndGet() == 0) {
                    LockSupport.unpark(waiter);
                }
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
