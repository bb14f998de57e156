package dev.edgelm.engine;

import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.model.ModelInput;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;
import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One token sequence on an {@link Engine}: prefill, decode, generate. Not thread-safe, except
 * {@link #cancel()}, which any thread may call.
 *
 * <h2>The sequence and the pending token</h2>
 * The session's <em>sequence</em> ({@link #tokens()}) is every token prefilled or decoded plus every token
 * {@link #generate} emitted; stop tokens are never part of it. The model has consumed all of it except,
 * possibly, the last emitted token: generation ends without running the model on its last token (nobody
 * may need the logits), leaving it <em>pending</em> ({@link #pendingToken()}). The next {@link #prefill},
 * {@link #decode} or {@link #generate} feeds it first, in the same forward call, so a next turn continues
 * exactly as if it had been fed. After each way of ending:
 * <ul>
 *   <li>{@link StopReason#STOP_TOKEN}: all emitted tokens consumed, nothing pending; the stop token is
 *       neither emitted nor consumed (a chat template's next turn writes its own end-of-turn token).</li>
 *   <li>{@link StopReason#CANCELLED}: all emitted tokens consumed, nothing pending.</li>
 *   <li>{@link StopReason#MAX_TOKENS}, {@link StopReason#CONTEXT_FULL}, {@link StopReason#STOP_STRING}:
 *       the last emitted token pending. For a stop string, the tokens that spelled it stay in the
 *       sequence (only its text is withheld): a caller that wants them gone rolls back to a checkpoint.</li>
 * </ul>
 *
 * <h2>Capacity</h2>
 * The sequence may hold at most {@link EngineOptions#maxNumTokens()} tokens (pending included). A prefill,
 * decode or generation with an explicit token limit that would not fit fails with an
 * {@link EdgeLmException} before anything changes; the session stays usable.
 */
public final class Session {
    private final Engine engine;
    private final Qwen35Model model;
    private final SequenceState state;
    private int[] tokens;
    private int length;
    private int pendingToken = -1;
    private float[] lastLogits;
    /** This session's copy of the last decode step's logits, reused from step to step. */
    private float[] logitsBuffer;
    private long prefilledTotal;
    private int prefilledLast;
    private long decodedTotal;
    private volatile boolean cancelRequested;
    private final int[] single = new int[1];

    Session(Engine engine, SequenceState state) {
        this.engine = engine;
        this.model = engine.model();
        this.state = state;
        this.tokens = new int[64];
    }

    private Session(Session other) {
        this.engine = other.engine;
        this.model = other.model;
        this.state = other.state.copy();
        this.tokens = other.tokens.clone();
        this.length = other.length;
        this.pendingToken = other.pendingToken;
        this.lastLogits = other.lastLogits == null ? null : other.lastLogits.clone();
        this.prefilledTotal = other.prefilledTotal;
        this.prefilledLast = other.prefilledLast;
        this.decodedTotal = other.decodedTotal;
    }

    /** A saved point of a session: see {@link #checkpoint()}. */
    public static final class Checkpoint {
        private final SequenceState.Checkpoint state;
        private final int length;
        private final int pendingToken;
        private final float[] lastLogits;

        private Checkpoint(SequenceState.Checkpoint state, int length, int pendingToken, float[] lastLogits) {
            this.state = state;
            this.length = length;
            this.pendingToken = pendingToken;
            this.lastLogits = lastLogits;
        }

        /** Tokens in the sequence at the checkpoint (pending included). */
        public int length() {
            return length;
        }

        /** Memory the checkpoint holds (the fixed-size model state and the saved logits). */
        public long bytes() {
            return state.bytes() + (lastLogits == null ? 0 : 4L * lastLogits.length);
        }
    }

    /**
     * Feeds {@code ids} (after the pending token, if any) in chunks of at most
     * {@link EngineOptions#prefillChunk()} tokens and returns the logits of the last position.
     */
    public float[] prefill(int[] ids) {
        return prefill(ids, engine.prefillPlan());
    }

    /** Like {@link #prefill(int[])} with an explicit plan; its sizes must cover the pending token too. */
    public float[] prefill(int[] ids, ChunkPlan plan) {
        if (ids.length == 0) {
            throw new EdgeLmException("nothing to prefill: no token ids given");
        }
        model.checkTokens(ids, 0, ids.length);
        checkRoom(ids.length, "a prompt of " + ids.length + " tokens");
        int[] feed = withPending(ids);
        List<Integer> chunks = plan.split(feed.length); // validate before changing anything
        float[] logits = null;
        int done = 0;
        for (int c = 0; c < chunks.size(); c++) {
            if (cancelRequested && done > 0) {
                // stop between chunks: the state holds the tokens fed so far, as if they were the whole prompt
                cancelRequested = false;
                int fed = pendingToken >= 0 ? done - 1 : done;
                append(Arrays.copyOf(ids, fed));
                pendingToken = -1;
                lastLogits = null;
                prefilledTotal += fed;
                prefilledLast = fed;
                throw new Cancelled(fed, ids.length);
            }
            int size = chunks.get(c);
            boolean last = c == chunks.size() - 1;
            logits = model.forward(state, feed, done, size, last ? Qwen35Model.Logits.LAST : Qwen35Model.Logits.NONE);
            done += size;
        }
        append(ids);
        pendingToken = -1;
        lastLogits = logits;
        prefilledTotal += ids.length;
        prefilledLast = ids.length;
        return logits.clone();
    }

    /**
     * Feeds {@code ids} holding images: each run of the image token ({@link Engine#visionTokens()}) takes the next of
     * {@code images} (its length must be that image's token count), whose embeddings replace the run's, at 3-D
     * positions; later tokens continue after the image's positions. Without images, as {@link #prefill(int[])}.
     */
    public float[] prefill(int[] ids, List<ImageEmbedding> images) {
        return prefill(ids, images, engine.prefillPlan());
    }

    /** As {@link #prefill(int[], List)} with an explicit plan (its sizes cover the pending token too). */
    public float[] prefill(int[] ids, List<ImageEmbedding> images, ChunkPlan plan) {
        if (images.isEmpty()) {
            return prefill(ids, plan);
        }
        if (ids.length == 0) {
            throw new EdgeLmException("nothing to prefill: no token ids given");
        }
        model.checkTokens(ids, 0, ids.length);
        checkRoom(ids.length, "a prompt of " + ids.length + " tokens");
        int[] feed = withPending(ids);
        ModelInput input = ModelInput.withImages(feed, engine.visionTokens().imagePad(), images,
                model.config().hiddenSize(), state.position() + state.ropeDelta());
        plan.split(feed.length); // validate before changing anything
        float[] logits = model.prefill(state, input, plan, false);
        append(ids);
        pendingToken = -1;
        lastLogits = logits;
        prefilledTotal += ids.length;
        prefilledLast = ids.length;
        return logits.clone();
    }

    /** Feeds one token (after the pending one, if any) and returns the logits that follow it. */
    public float[] decode(int id) {
        single[0] = id;
        model.checkTokens(single, 0, 1);
        checkRoom(1, "one more token");
        float[] logits = forward(withPending(single));
        append(single);
        decodedTotal++;
        return logits.clone();
    }

    public GenerationResult generate(GenerationOptions options) {
        return generate(options, null, GenerationListener.NONE);
    }

    public GenerationResult generate(GenerationOptions options, GenerationListener listener) {
        return generate(options, null, listener);
    }

    /**
     * Generates from the current end of the sequence (it must not be empty) until a stop token, a stop
     * string (needs {@code decoder}), the token limit, the end of the context, or {@link #cancel()}.
     *
     * @param decoder  turns tokens into text for the listener, the result and stop strings; may be null
     * @param listener receives the tokens and text as they are produced
     */
    public GenerationResult generate(GenerationOptions options, TokenDecoder decoder, GenerationListener listener) {
        if (pendingToken < 0 && lastLogits == null) {
            throw new EdgeLmException("nothing to generate from: prefill a prompt first");
        }
        if (!options.stopStrings().isEmpty() && decoder == null) {
            throw new EdgeLmException("stop strings need a token decoder (a tokenizer) to see the text");
        }
        int available = state.capacity() - sequenceLength();
        OptionalInt max = options.maxNewTokens();
        if (max.isPresent() && max.getAsInt() > available) {
            throw new EdgeLmException("cannot generate up to " + max.getAsInt() + " tokens: the context has room for "
                    + available + " more (capacity " + state.capacity() + ", " + sequenceLength() + " in use)");
        }
        int limit = max.orElse(available);
        long seed = options.seed().orElseGet(() -> ThreadLocalRandom.current().nextLong());
        if (limit == 0) {
            return new GenerationResult(new int[0], "", StopReason.CONTEXT_FULL, -1, null, seed);
        }
        Sampler sampler = new Sampler(options, model.config().vocabSize(), seed);
        sampler.observeContext(tokens, 0, length);
        TokenDecoder.Stream text = decoder == null ? null : decoder.open();
        StopStringMatcher matcher = options.stopStrings().isEmpty() ? null : new StopStringMatcher(options.stopStrings());
        StringBuilder emittedText = new StringBuilder();
        int[] emitted = new int[Math.min(limit, 256)];
        int count = 0;
        StopReason reason;
        int stopToken = -1;
        try {
            float[] logits = pendingToken >= 0 ? forwardPending() : lastLogits;
            while (true) {
                if (cancelRequested) {
                    reason = StopReason.CANCELLED;
                    break;
                }
                int t = sampler.sample(logits);
                if (options.isStopToken(t)) {
                    reason = StopReason.STOP_TOKEN;
                    stopToken = t;
                    break;
                }
                if (options.topLogprobs() >= 0) {
                    listener.onLogprobs(TokenLogprobs.of(logits, t, options.topLogprobs()));
                }
                sampler.accept(t);
                if (count == emitted.length) {
                    emitted = Arrays.copyOf(emitted, Math.min(limit, 2 * count));
                }
                emitted[count++] = t;
                single[0] = t;
                append(single);
                pendingToken = t;
                lastLogits = null;
                decodedTotal++;
                listener.onToken(t);
                if (text != null) {
                    String piece = text.next(t);
                    release(matcher == null ? piece : matcher.push(piece), emittedText, listener);
                    if (matcher != null && matcher.matched() != null) {
                        reason = StopReason.STOP_STRING;
                        break;
                    }
                }
                if (count == limit) {
                    reason = max.isPresent() ? StopReason.MAX_TOKENS : StopReason.CONTEXT_FULL;
                    break;
                }
                logits = forwardPending();
            }
        } finally {
            cancelRequested = false;
        }
        if (text != null && reason != StopReason.STOP_STRING) {
            String tail = text.finish();
            if (matcher != null) {
                tail = matcher.push(tail);
                if (matcher.matched() != null) {
                    reason = StopReason.STOP_STRING;
                } else {
                    tail += matcher.flush();
                }
            }
            release(tail, emittedText, listener);
        }
        return new GenerationResult(Arrays.copyOf(emitted, count), emittedText.toString(), reason, stopToken,
                matcher == null ? null : matcher.matched(), seed);
    }

    private static void release(String piece, StringBuilder all, GenerationListener listener) {
        if (!piece.isEmpty()) {
            all.append(piece);
            listener.onText(piece);
        }
    }

    /**
     * Asks a running {@link #generate} to stop after its current step; it returns normally with
     * {@link StopReason#CANCELLED} and the session stays usable. Safe from any thread. A request made while
     * no generation runs is dropped when the next generation ends (it stops that one if it is already running).
     */
    public void cancel() {
        cancelRequested = true;
    }

    /** The engine this session runs on. */
    public Engine engine() {
        return engine;
    }

    /** Drops a cancel request that came too late to stop anything (a new turn starts clean). */
    public void clearCancel() {
        cancelRequested = false;
    }

    /**
     * A {@link #prefill} stopped by {@link #cancel()} between two chunks: the session holds the first {@code fed}
     * tokens of the prompt (a valid state, reusable as a prefix) and nothing to generate from.
     */
    public static final class Cancelled extends EdgeLmException {
        public Cancelled(int fed, int of) {
            super("cancelled after " + fed + " of " + of + " prompt tokens");
        }
    }

    /** Tokens the model has consumed: the position of the next token fed (a pending token not counted). */
    public int position() {
        return state.position();
    }

    /** The last emitted token when the model has not consumed it yet. */
    public OptionalInt pendingToken() {
        return pendingToken >= 0 ? OptionalInt.of(pendingToken) : OptionalInt.empty();
    }

    /** The sequence: everything prefilled, decoded and emitted, the pending token included. */
    public int[] tokens() {
        return Arrays.copyOf(tokens, length);
    }

    /** Context capacity in tokens. */
    public int capacity() {
        return state.capacity();
    }

    /** Tokens passed to {@link #prefill} over the session's life. */
    public long tokensPrefilled() {
        return prefilledTotal;
    }

    /** Tokens passed to the last {@link #prefill} call. */
    public int lastPrefillTokens() {
        return prefilledLast;
    }

    /** Tokens emitted by {@link #generate} plus tokens fed by {@link #decode}, over the session's life. */
    public long tokensDecoded() {
        return decodedTotal;
    }

    /**
     * Saves the session's current point (the model's fixed-size state, the position, the pending token).
     * {@link #rollback} can return to it as long as the sequence still starts with the same tokens.
     */
    public Checkpoint checkpoint() {
        return new Checkpoint(state.checkpoint(), length, pendingToken, lastLogits == null ? null : lastLogits.clone());
    }

    /** Returns to {@code checkpoint}: the tokens after it are forgotten. */
    public void rollback(Checkpoint checkpoint) {
        if (checkpoint.length > length) {
            throw new IllegalArgumentException("checkpoint at " + checkpoint.length + " tokens is ahead of the session at " + length);
        }
        state.rollback(checkpoint.state);
        length = checkpoint.length;
        pendingToken = checkpoint.pendingToken;
        lastLogits = checkpoint.lastLogits == null ? null : checkpoint.lastLogits.clone();
    }

    private static final int STATE_MAGIC = 0x45444753; // "EDGS"

    /**
     * Writes the session (its sequence, pending token and the model state) so that {@link #restore} can continue
     * it later without reading the sequence again. The file fits only a model of the same configuration.
     */
    public void save(java.io.OutputStream stream) throws java.io.IOException {
        java.io.DataOutputStream out = new java.io.DataOutputStream(new java.io.BufferedOutputStream(stream, 1 << 16));
        out.writeInt(STATE_MAGIC);
        out.writeInt(2); // 2: the state carries its rope delta
        out.writeUTF(model.config().toString());
        out.writeInt(length);
        for (int i = 0; i < length; i++) {
            out.writeInt(tokens[i]);
        }
        out.writeInt(pendingToken);
        out.writeInt(lastLogits == null ? -1 : lastLogits.length);
        if (lastLogits != null) {
            for (float f : lastLogits) {
                out.writeFloat(f);
            }
        }
        state.writeTo(out);
        out.flush();
    }

    /** Replaces this session's sequence and state with what {@link #save} wrote; on failure the session is empty. */
    public void restore(java.io.InputStream stream) throws java.io.IOException {
        java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(stream, 1 << 16));
        reset();
        try {
            if (in.readInt() != STATE_MAGIC || in.readInt() != 2) {
                throw new EdgeLmException("not a saved session state");
            }
            if (!in.readUTF().equals(model.config().toString())) {
                throw new EdgeLmException("the saved state is of a model with another configuration");
            }
            int n = in.readInt();
            if (n < 0 || n > state.capacity()) {
                throw new EdgeLmException("the saved state holds " + n + " tokens; this context holds " + state.capacity());
            }
            int[] ids = new int[Math.max(64, n)];
            for (int i = 0; i < n; i++) {
                ids[i] = in.readInt();
            }
            int pending = in.readInt();
            int logits = in.readInt();
            if (logits != -1 && logits != model.config().vocabSize()) {
                throw new EdgeLmException("the saved state's logits do not fit this model");
            }
            float[] last = null;
            if (logits > 0) {
                last = new float[logits];
                for (int i = 0; i < logits; i++) {
                    last[i] = in.readFloat();
                }
            }
            state.readFrom(in);
            if (state.position() + (pending >= 0 ? 1 : 0) != n) {
                throw new EdgeLmException("the saved state is inconsistent (" + state.position() + " positions for " + n + " tokens)");
            }
            tokens = ids;
            length = n;
            pendingToken = pending;
            lastLogits = last;
        } catch (RuntimeException | java.io.IOException e) {
            reset();
            throw e;
        }
    }

    /** An independent copy of this session (deep: state, sequence, counters). */
    public Session fork() {
        return new Session(this);
    }

    /** Back to an empty sequence (counters kept). */
    public void reset() {
        state.reset();
        length = 0;
        pendingToken = -1;
        lastLogits = null;
    }

    private int sequenceLength() {
        return state.position() + (pendingToken >= 0 ? 1 : 0);
    }

    private void checkRoom(int n, String what) {
        int inUse = sequenceLength();
        if ((long) inUse + n > state.capacity()) {
            throw new EdgeLmException(what + " does not fit in the context: " + ((long) inUse + n)
                    + " tokens needed, capacity is " + state.capacity() + " (" + inUse + " in use, "
                    + (state.capacity() - inUse) + " available)");
        }
    }

    /** {@code ids}, preceded by the pending token when there is one. */
    private int[] withPending(int[] ids) {
        if (pendingToken < 0) {
            return ids;
        }
        int[] feed = new int[ids.length + 1];
        feed[0] = pendingToken;
        System.arraycopy(ids, 0, feed, 1, ids.length);
        return feed;
    }

    private float[] forwardPending() {
        single[0] = pendingToken;
        return forward(single);
    }

    /** One forward call over {@code feed} (the pending token already in it); returns the last logits. */
    private float[] forward(int[] feed) {
        if (logitsBuffer == null) {
            logitsBuffer = new float[model.config().vocabSize()];
        }
        model.forwardLast(state, feed, 0, feed.length, logitsBuffer);
        pendingToken = -1;
        lastLogits = logitsBuffer;
        return logitsBuffer;
    }

    private void append(int[] ids) {
        if (length + ids.length > tokens.length) {
            tokens = Arrays.copyOf(tokens, Math.max(length + ids.length, 2 * tokens.length));
        }
        System.arraycopy(ids, 0, tokens, length, ids.length);
        length += ids.length;
    }
}
