package dev.edgelm.engine.batch;

import dev.edgelm.util.EdgeLmException;

/**
 * How a {@link BatchScheduler} runs.
 *
 * @param maxParallel      sequences prefilled or decoded at once; further requests wait in FIFO order
 * @param contextLength    context capacity of each sequence (prompt plus generated tokens)
 * @param cacheRamBytes    bytes the cross-request prefix cache may hold (0: no cache)
 * @param prefillChunk     largest prefill forward call: a new request's prompt goes in chunks of at most this
 *                         many tokens, one chunk per scheduler step, between the decode steps of the others
 * @param snapshotInterval the prefix cache also keeps a snapshot every this many prompt tokens
 */
public record BatchOptions(int maxParallel, int contextLength, long cacheRamBytes, int prefillChunk, int snapshotInterval) {
    public static final int DEFAULT_SNAPSHOT_INTERVAL = 512;

    public BatchOptions {
        if (maxParallel < 1) {
            throw new EdgeLmException("maxParallel (parallel sequences) must be >= 1, got " + maxParallel);
        }
        if (contextLength < 1) {
            throw new EdgeLmException("contextLength must be >= 1, got " + contextLength);
        }
        if (cacheRamBytes < 0) {
            throw new EdgeLmException("cacheRamBytes must be >= 0, got " + cacheRamBytes);
        }
        if (prefillChunk < 1) {
            throw new EdgeLmException("prefillChunk must be >= 1, got " + prefillChunk);
        }
        if (snapshotInterval < 1) {
            throw new EdgeLmException("snapshotInterval must be >= 1, got " + snapshotInterval);
        }
    }

    /** With a snapshot every {@value #DEFAULT_SNAPSHOT_INTERVAL} prompt tokens. */
    public BatchOptions(int maxParallel, int contextLength, long cacheRamBytes, int prefillChunk) {
        this(maxParallel, contextLength, cacheRamBytes, prefillChunk, DEFAULT_SNAPSHOT_INTERVAL);
    }

    public BatchOptions withSnapshotInterval(int tokens) {
        return new BatchOptions(maxParallel, contextLength, cacheRamBytes, prefillChunk, tokens);
    }
}
