package dev.edgelm.server;

import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.TokenDecoder;

/**
 * Runs generations for the server: a prompt in, tokens out through a listener; submit a request, get a handle
 * to cancel or join. {@link BatchBackend} implements it on the continuous-batching engine; the interface keeps
 * HTTP code apart from the engine (and lets tests stand in a backend of their own).
 */
public interface GenerationBackend extends AutoCloseable {

    /**
     * A generation to run.
     *
     * @param prompt     the prompt's token ids (not empty)
     * @param boundaries positions inside the prompt where a later request is likely to part from this one
     *                   (message starts, ends of message headers): a backend that reuses state across
     *                   requests may snapshot there
     * @param later      positions where a later request is likely to part from this one but where this request's
     *                   prefill should not stop (the end of the header its reply follows): a backend may take the
     *                   snapshot after the request instead
     */
    record Request(int[] prompt, int[] boundaries, GenerationOptions options, TokenDecoder decoder, GenerationListener listener,
                   int[] later) {
        public Request(int[] prompt, int[] boundaries, GenerationOptions options, TokenDecoder decoder, GenerationListener listener) {
            this(prompt, boundaries, options, decoder, listener, new int[0]);
        }
    }

    /** A submitted generation. */
    interface Handle {
        /** Stops the generation (queued: it never starts; running: it stops within a token). Any thread. */
        void cancel();

        /** Waits for the result; a failure of the generation is rethrown. */
        GenerationResult join() throws InterruptedException;

        /** Prompt tokens whose state came from an earlier request (known once the generation started). */
        int cachedTokens();

        int promptTokens();

        /** Prefill forward calls the prompt took (0 where a backend does not count them). */
        default int prefillChunks() {
            return 0;
        }

        /** {@link System#nanoTime()} when the generation left the queue for a slot (0 while queued or unknown). */
        default long admittedAtNanos() {
            return 0;
        }
    }

    /** The queue is full: the request is refused (HTTP 429). */
    final class QueueFullException extends RuntimeException {
        public QueueFullException(String message) {
            super(message);
        }
    }

    /** Counters for /metrics. */
    record Stats(int active, int queued, long promptTokens, long cachedTokens, long prefilledTokens,
                 double prefillSeconds, long decodedTokens, double decodeSeconds, long snapshotBytes, long decodeSteps,
                 long snapshotTokens, double snapshotSeconds) {
        /** Without the deferred snapshots' counts. */
        public Stats(int active, int queued, long promptTokens, long cachedTokens, long prefilledTokens,
                     double prefillSeconds, long decodedTokens, double decodeSeconds, long snapshotBytes, long decodeSteps) {
            this(active, queued, promptTokens, cachedTokens, prefilledTokens, prefillSeconds, decodedTokens, decodeSeconds,
                    snapshotBytes, decodeSteps, 0, 0);
        }
    }

    Handle submit(Request request);

    Stats stats();

    /** Refuses new requests, waits for running and queued ones, and frees their states. */
    @Override
    void close();
}
