package dev.edgelm.server;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.batch.BatchOptions;
import dev.edgelm.engine.batch.BatchScheduler;
import dev.edgelm.engine.batch.BatchStats;
import dev.edgelm.engine.batch.Generation;
import dev.edgelm.engine.batch.GenerationRequest;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's {@link GenerationBackend} on the continuous-batching engine ({@link BatchScheduler}): up to
 * {@code parallel} generations advance together, one batched forward pass per decode step; a new request's
 * prompt is prefilled in chunks between those steps; a prefix cache of state snapshots, bounded by
 * {@code --cache-ram}, lets a request that extends an earlier conversation prefill only what is new.
 *
 * <p>The scheduler's own queue is unbounded; this backend bounds it: beyond {@code parallel} running and
 * {@code queueLimit} waiting requests, {@link #submit} refuses with {@link QueueFullException} (HTTP 429).
 */
public final class BatchBackend implements GenerationBackend {
    private final BatchScheduler scheduler;
    private final int parallel;
    private final int queueLimit;
    private int outstanding; // submitted and not yet ended; guarded by this
    private boolean closed; // guarded by this
    private final AtomicLong promptTokens = new AtomicLong();

    /**
     * @param parallel      sequences decoded at once
     * @param queueLimit    requests that may wait for a sequence slot; more are refused
     * @param cacheRamBytes memory the prefix cache's snapshots may hold (0: no reuse across requests)
     */
    public BatchBackend(Engine engine, int parallel, int queueLimit, long cacheRamBytes) {
        if (parallel < 1 || queueLimit < 0) {
            throw new IllegalArgumentException("parallel must be >= 1 and the queue >= 0");
        }
        this.parallel = parallel;
        this.queueLimit = queueLimit;
        this.scheduler = new BatchScheduler(engine, new BatchOptions(parallel, engine.options().maxNumTokens(),
                cacheRamBytes, engine.options().prefillChunk()));
    }

    /**
     * Runs {@code parallel} short generations at once on a scheduler of their own (no cache), so that the batched
     * decode kernels are compiled before the first requests arrive ({@code Warmup} compiles the one-token ones).
     */
    public static void warmUp(Engine engine, int parallel) {
        int vocab = engine.config().vocabSize();
        GenerationOptions greedy = GenerationOptions.builder().temperature(0).maxNewTokens(16).build();
        try (BatchScheduler s = new BatchScheduler(engine, new BatchOptions(parallel, 64, 0, engine.options().prefillChunk()))) {
            for (int round = 0; round < 3; round++) {
                Generation[] g = new Generation[parallel];
                for (int i = 0; i < parallel; i++) {
                    int[] prompt = new int[8];
                    for (int j = 0; j < prompt.length; j++) {
                        prompt[j] = (31 * i + 7 * j + round) % vocab;
                    }
                    g[i] = s.submit(new GenerationRequest(prompt, greedy, null, null));
                }
                for (Generation x : g) {
                    x.join();
                }
            }
        }
    }

    @Override
    public Handle submit(Request request) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the server is shutting down");
            }
            if (outstanding >= parallel + queueLimit) {
                throw new QueueFullException("all " + parallel + " slots are busy and " + (outstanding - parallel)
                        + " requests are waiting (--queue " + queueLimit + ")");
            }
            outstanding++;
        }
        Generation g;
        try {
            g = scheduler.submit(new GenerationRequest(request.prompt(), request.options(), request.decoder(),
                    request.listener(), request.boundaries().length == 0 ? null : request.boundaries(),
                    request.later() == null || request.later().length == 0 ? null : request.later()));
        } catch (dev.edgelm.util.EdgeLmException e) {
            ended();
            throw ApiException.invalid(null, e.getMessage()); // what the scheduler refuses up front is the request's
        } catch (RuntimeException e) {
            ended();
            throw e;
        }
        g.future().whenComplete((r, t) -> {
            if (g.admittedAtNanos() != 0) {
                promptTokens.addAndGet(g.promptTokens());
            }
            ended();
        });
        return new Handle() {
            @Override
            public void cancel() {
                g.cancel();
            }

            @Override
            public GenerationResult join() {
                return g.join();
            }

            @Override
            public int cachedTokens() {
                return g.cachedTokens();
            }

            @Override
            public int promptTokens() {
                return g.promptTokens();
            }

            @Override
            public int prefillChunks() {
                return g.prefillChunks();
            }

            @Override
            public long admittedAtNanos() {
                return g.admittedAtNanos();
            }
        };
    }

    private synchronized void ended() {
        outstanding--;
        notifyAll();
    }

    @Override
    public Stats stats() {
        BatchStats s = scheduler.stats();
        return new Stats(s.activeSequences(), s.queued(), promptTokens.get(), s.tokensReused(), s.prefillTokens(),
                s.prefillSeconds(), s.decodeTokens(), s.decodeSeconds(), s.cacheBytes(), s.decodeSteps(), scheduler.deferredSnapshotTokens(), scheduler.deferredSnapshotSeconds());
    }

    /** Refuses new requests, waits (bounded) for the running and queued ones, then stops the scheduler. */
    @Override
    public void close() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EdgeLmServer.DRAIN_TIMEOUT_MS);
        synchronized (this) {
            closed = true;
            try {
                long left;
                while (outstanding > 0 && (left = deadline - System.nanoTime()) > 0) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        scheduler.close(); // cancels whatever outlived the drain
    }
}
