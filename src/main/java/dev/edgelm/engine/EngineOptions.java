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

    public EngineOptions {
        if (threads < 1) {
            throw new EdgeLmException("threads must be >= 1, got " + threads);
        }
        if (maxNumTokens < 1) {
            throw new EdgeLmException("max number of tokens must be >= 1, got " + maxNumTokens);
        }
        if (prefillChunk < 1) {
            throw new EdgeLmException("prefill chunk must be >= 1, got " + prefillChunk);
        }
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
