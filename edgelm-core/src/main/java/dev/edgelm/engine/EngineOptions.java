package dev.edgelm.engine;

import dev.edgelm.model.ChunkPlan;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.util.EdgeLmException;

/**
 * How an {@link Engine} runs a model.
 *
 * @param threads      worker threads of the kernels
 * @param maxNumTokens context capacity of each session (prompt, history and generated tokens together);
 *                     the KV cache grows on demand, so a large value costs memory only when it is used
 * @param prefillChunk largest number of tokens one forward call takes during prefill
 */
public record EngineOptions(int threads, int maxNumTokens, int prefillChunk) {
    public static final int DEFAULT_MAX_NUM_TOKENS = 32768;
    /** The most positions one sequence may hold (16 Mi tokens, 64 times Qwen3.5's trained context). */
    public static final int MAX_CONTEXT_TOKENS = 1 << 24;

    public EngineOptions {
        checkThreads(threads, "threads");
        checkContext(maxNumTokens, "max number of tokens");
        if (prefillChunk < 1) {
            throw new EdgeLmException("prefill chunk must be >= 1, got " + prefillChunk);
        }
    }

    /**
     * The most worker threads: twice the logical CPUs (at least 4). The kernels' workers spin while they wait for
     * work, so threads beyond the CPUs only slow every step down.
     */
    public static int maxThreads() {
        return Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
    }

    /** {@code n} when it is a usable thread count, else an error naming {@code option}. */
    public static int checkThreads(int n, String option) {
        if (n < 1 || n > maxThreads()) {
            throw new EdgeLmException(option + " must be between 1 and " + maxThreads() + " (twice the "
                    + Runtime.getRuntime().availableProcessors() + " logical CPUs), got " + n);
        }
        return n;
    }

    /** {@code n} when it is a usable context capacity, else an error naming {@code option}. */
    public static int checkContext(long n, String option) {
        if (n < 1 || n > MAX_CONTEXT_TOKENS) {
            throw new EdgeLmException(option + " must be between 1 and " + MAX_CONTEXT_TOKENS + " tokens, got " + n);
        }
        return (int) n;
    }

    /** Physical cores, {@value #DEFAULT_MAX_NUM_TOKENS} tokens, chunks of {@value ChunkPlan#DEFAULT_MAX_CHUNK}. */
    public static EngineOptions defaults() {
        return new EngineOptions(Parallel.physicalCores(), DEFAULT_MAX_NUM_TOKENS, ChunkPlan.DEFAULT_MAX_CHUNK);
    }

    public EngineOptions withThreads(int n) {
        return new EngineOptions(n, maxNumTokens, prefillChunk);
    }

    public EngineOptions withMaxNumTokens(int n) {
        return new EngineOptions(threads, n, prefillChunk);
    }

    public EngineOptions withPrefillChunk(int n) {
        return new EngineOptions(threads, maxNumTokens, n);
    }
}
