package dev.edgelm.engine.batch;

import dev.edgelm.engine.GenerationResult;
import dev.edgelm.util.EdgeLmException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A request submitted to a {@link BatchScheduler}: its result once it ends, how much of its prompt came
 * from the prefix cache, and when things happened ({@link System#nanoTime()} stamps, 0 until they happen).
 */
public final class Generation {
    private final GenerationRequest request;
    private final CompletableFuture<GenerationResult> result = new CompletableFuture<>();
    private final long submittedAt = System.nanoTime();
    volatile boolean cancelRequested;
    volatile int cachedTokens;
    volatile int prefilledTokens;
    volatile int prefillChunks;
    volatile long admittedAt;
    volatile long firstTokenAt;
    volatile long finishedAt;

    Generation(GenerationRequest request) {
        this.request = request;
    }

    GenerationRequest request() {
        return request;
    }

    /**
     * Asks the generation to stop: a queued request ends without running, a running one after the current
     * scheduler step; either way it completes normally with {@code CANCELLED} and the tokens so far. Any thread.
     */
    public void cancel() {
        cancelRequested = true;
    }

    /**
     * Waits for the end and returns the result; an error of the generation (bad input found late, a listener
     * that threw) is rethrown, an {@link EdgeLmException} as it was.
     */
    public GenerationResult join() {
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EdgeLmException("interrupted while waiting for a generation");
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        } catch (CancellationException e) {
            throw new EdgeLmException("the generation was abandoned");
        }
    }

    /** The result as a future (completes on the scheduler thread). */
    public CompletableFuture<GenerationResult> future() {
        return result;
    }

    public boolean isDone() {
        return result.isDone();
    }

    /** Prompt tokens taken from the prefix cache (known once the request has left the queue). */
    public int cachedTokens() {
        return cachedTokens;
    }

    /** Tokens of the prompt. */
    public int promptTokens() {
        return request.prompt().length;
    }

    /** Prompt tokens run through the model so far. */
    public int prefilledTokens() {
        return prefilledTokens;
    }

    /** Prefill forward calls its prompt took so far (each pays a fixed cost besides its tokens). */
    public int prefillChunks() {
        return prefillChunks;
    }

    public long submittedAtNanos() {
        return submittedAt;
    }

    /** When a sequence slot took it (0 while queued). */
    public long admittedAtNanos() {
        return admittedAt;
    }

    /** When its first token was sampled (0 before, or when none was). */
    public long firstTokenAtNanos() {
        return firstTokenAt;
    }

    public long finishedAtNanos() {
        return finishedAt;
    }

    CompletableFuture<GenerationResult> completion() {
        return result;
    }
}
