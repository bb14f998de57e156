package dev.edgelm.engine;

import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.SequenceState;

/**
 * Throwaway forward passes on a sequence of their own, run on a background thread while the model would
 * otherwise sit idle (a chat waiting for its first message), so that the JIT has compiled the kernels when
 * the first real prompt arrives.
 *
 * <p>Why: the Vector API kernels run one to two orders of magnitude slower until C2 has compiled them, and
 * C2 needs about three seconds of one core for them (see docs/engine.md), so the first prompt of a fresh
 * process waits that long on top of its own work. A pass is a short prefill (the chunked GEMM kernels,
 * attention, the delta rule) and a few decode steps (the matvec kernels), repeated until a pass is no longer
 * markedly faster than the one before. The passes share nothing with any session but the model's workspace,
 * and forward passes take turns on the model, so they cannot change what a session computes.
 *
 * <p>{@link #close()} stops the passes at the next forward pass and waits for the one in flight: call it
 * before the first real forward pass so that the warm-up never competes with it for the cores.
 */
public final class Warmup implements AutoCloseable {
    /**
     * Prompt tokens per pass, fed as one chunk: more than a GEMM panel, so prefill takes the chunked kernels a
     * long prompt uses. Measured against chunks of 16 (0.8B int8, the first 256-token prompt after 0.5 /
     * 1.5 / 6 s of idling, the wait for the pass in flight included): 2.7 / 1.9 / 1.2 s against 3.5 / 2.3 /
     * 1.6 s; without a warm-up 3.8-4.0 s.
     */
    static final int PROMPT_TOKENS = 64;
    static final int DECODE_TOKENS = 8;
    static final int MAX_PASSES = 12;
    /** The passes stop at the first one that is not this much faster than the one before it. */
    private static final double SETTLED = 1.25;

    /** The background thread, or null for passes run on the caller's thread. */
    private Thread thread;
    private volatile boolean stopRequested;
    private volatile int passes;

    private Warmup() {}

    /** Starts warming {@code engine} up on a background thread. */
    public static Warmup start(Engine engine) {
        Warmup w = new Warmup();
        w.thread = new Thread(() -> w.run(engine), "edgelm-warmup");
        w.thread.setDaemon(true);
        w.thread.start();
        return w;
    }

    /** Runs the passes on the calling thread until they settle, at most {@link #MAX_PASSES}; returns how many. */
    public static int runToCompletion(Engine engine) {
        Warmup w = new Warmup();
        w.passes(engine);
        return w.passes;
    }

    private void run(Engine engine) {
        try {
            passes(engine);
        } catch (RuntimeException e) {
            // nothing to report: a real prompt meets the same failure and reports it
        }
    }

    private void passes(Engine engine) {
        SequenceState state = engine.model().newState(PROMPT_TOKENS + DECODE_TOKENS);
        int vocab = engine.config().vocabSize();
        int[] prompt = new int[PROMPT_TOKENS];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = i % vocab;
        }
        long previous = Long.MAX_VALUE;
        for (int pass = 0; pass < MAX_PASSES && !stopRequested; pass++) {
            long start = System.nanoTime();
            state.reset();
            Session session = new Session(engine, state);
            session.prefill(prompt, ChunkPlan.maxChunk(PROMPT_TOKENS));
            for (int i = 0; i < DECODE_TOKENS && !stopRequested; i++) {
                session.decode(i % vocab);
            }
            passes = pass + 1;
            long took = System.nanoTime() - start;
            if (took * SETTLED > previous) {
                break;
            }
            previous = took;
        }
    }

    /** Forward passes run so far. */
    public int passes() {
        return passes;
    }

    /** Stops the passes and waits for the forward pass in flight, if any. */
    @Override
    public void close() {
        stopRequested = true;
        boolean interrupted = false;
        while (thread != null && thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the background thread has ended. */
    boolean finished() {
        return thread == null || !thread.isAlive();
    }
}
