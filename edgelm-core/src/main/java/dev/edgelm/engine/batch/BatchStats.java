package dev.edgelm.engine.batch;

/**
 * Counters of a {@link BatchScheduler}, from its start (the first two are the current values).
 *
 * @param activeSequences sequences being prefilled or decoded now
 * @param queued          requests waiting for a free sequence slot
 * @param requests        requests admitted so far
 * @param cacheHits       admitted requests that started from a cached prefix
 * @param tokensReused    prompt tokens taken from the prefix cache instead of being prefilled
 * @param prefillTokens   prompt tokens run through the model
 * @param decodeTokens    tokens generated (each sampled token counts once)
 * @param decodeSteps     batched decode forward passes
 * @param cacheEntries    snapshots held by the prefix cache now
 * @param cacheBytes      bytes they hold
 * @param prefillSeconds  time spent in prefill chunks (forward passes and snapshots)
 * @param decodeSeconds   time spent in decode steps (the batched forward pass and the sampling of every sequence)
 * @param decodeCpuSeconds CPU time of the whole process during the decode steps (every thread: the kernels' workers,
 *                         and whatever else the process runs meanwhile); on a shared machine, where wall time
 *                         depends on the neighbours, tokens per CPU-second compare better than tokens per second
 */
public record BatchStats(int activeSequences, int queued, long requests, long cacheHits, long tokensReused,
                         long prefillTokens, long decodeTokens, long decodeSteps, int cacheEntries, long cacheBytes,
                         double prefillSeconds, double decodeSeconds, double decodeCpuSeconds) {}
