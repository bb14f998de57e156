package dev.edgelm.model;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.StageClock;
import dev.edgelm.tensor.VectorMath;
import dev.edgelm.util.EdgeLmException;
import java.util.IdentityHashMap;

/**
 * The Qwen3.5 text decoder: immutable config and weights plus the thread pool its kernels run on.
 * Per-sequence data lives in {@link SequenceState}; one model serves any number of states (one forward
 * call at a time, since they share the pool).
 *
 * <pre>
 *   x = embed(tokens)
 *   for each layer:  x += mixer(rmsnorm(x));  x += mlp(rmsnorm(x))     mixer: DeltaNet or attention
 *   logits = lm_head(rmsnorm(x))
 * </pre>
 */
public final class Qwen35Model implements AutoCloseable {

    /** Which positions of a chunk get logits. */
    public enum Logits { ALL, LAST, NONE }

    /** Observes per-layer intermediates (tests, debugging); arrays are [n, hidden] and only valid during the call. */
    public interface Trace {
        void embeddings(float[] x, int n);

        /** The token mixer's output (after out_proj / o_proj, before the residual add). */
        void mixer(int layer, float[] mixerOut, int n);

        /** The residual stream after the whole layer. */
        void layer(int layer, float[] residual, int n);

        void finalNorm(float[] normed, int n);
    }

    /**
     * Whether a one-token forward call (decode) runs the projections that read the same input in one parallel
     * section each ({@link Parallel#fused}): the DeltaNet layer's four, attention's three, the MLP's gate and up.
     * {@code -Dedgelm.decode.fused=false} runs one section per matrix, as before, to measure; the results are the
     * same bits either way (each row by the same kernel). Not for chunks of several tokens: their GEMMs pack the
     * activations in parallel sections of their own before the product. Tests switch it.
     */
    static volatile boolean fusedDecode = Boolean.parseBoolean(System.getProperty("edgelm.decode.fused", "true"));

    /**
     * Runs {@code projections}, the matmuls of one layer that read the same input: for one token (decode) as one
     * parallel section ({@link Parallel#fused}) while {@link #fusedDecode}, else one section per matrix.
     */
    static void sameInput(Parallel pool, int n, Runnable projections) {
        if (n == 1 && fusedDecode) {
            pool.fused(projections);
        } else {
            projections.run();
        }
    }

    private final Qwen35Config config;
    private final Qwen35Weights weights;
    private final Parallel pool;
    private final AutoCloseable storage;
    private final RotaryEmbedding rope;
    private final GatedDeltaNetLayer deltaNet;
    private final GatedAttentionLayer attention;
    private final Workspace workspace = new Workspace();

    public Qwen35Model(Qwen35Config config, Qwen35Weights weights, int threads, AutoCloseable storage) {
        this.config = config;
        this.weights = weights;
        this.pool = new Parallel(threads);
        this.storage = storage;
        this.rope = new RotaryEmbedding(config);
        this.deltaNet = new GatedDeltaNetLayer(config, pool);
        this.attention = new GatedAttentionLayer(config, pool, rope);
    }

    public Qwen35Config config() {
        return config;
    }

    public Qwen35Weights weights() {
        return weights;
    }

    public int threads() {
        return pool.threads();
    }

    public SequenceState newState(int capacity) {
        return new SequenceState(config, capacity);
    }

    public float[] forward(SequenceState state, int[] tokens, int offset, int n, Logits logits) {
        return forward(state, tokens, offset, n, logits, null);
    }

    /**
     * Feeds {@code tokens[offset .. offset+n)} at the state's position and advances it. Returns logits
     * [n, vocab] (ALL), [vocab] (LAST) or an empty array (NONE), in a new array the caller owns.
     */
    public float[] forward(SequenceState state, int[] tokens, int offset, int n, Logits logits, Trace trace) {
        float[] out = switch (logits) {
            case ALL -> new float[n * config.vocabSize()];
            case LAST -> new float[config.vocabSize()];
            case NONE -> new float[0];
        };
        run(state, tokens, offset, n, logits, trace, out, null);
        return out;
    }

    /**
     * Feeds {@code input}'s tokens {@code [offset, offset+n)}: embeddings it gives replace the looked-up ones, and
     * its positions drive the rotary angles. Afterwards the state's rope delta makes later plain ids continue
     * after the input's largest position. Returns logits as {@link #forward}.
     */
    public float[] forward(SequenceState state, ModelInput input, int offset, int n, Logits logits) {
        float[] out = switch (logits) {
            case ALL -> new float[n * config.vocabSize()];
            case LAST -> new float[config.vocabSize()];
            case NONE -> new float[0];
        };
        run(state, input.tokens(), offset, n, logits, null, out, input);
        return out;
    }

    /**
     * As {@link #forward} with {@link Logits#LAST}, but writes the logits into {@code out} [vocab], a buffer
     * the caller reuses: decode then allocates nothing per token.
     */
    public void forwardLast(SequenceState state, int[] tokens, int offset, int n, float[] out) {
        run(state, tokens, offset, n, Logits.LAST, null, out, null);
    }

    /** Fails with an {@link EdgeLmException} naming the first of {@code tokens[offset .. offset+n)} outside the vocabulary. */
    public void checkTokens(int[] tokens, int offset, int n) {
        int vocab = config.vocabSize();
        for (int t = 0; t < n; t++) {
            int id = tokens[offset + t];
            if (id < 0 || id >= vocab) {
                throw new EdgeLmException("token id " + id + " is outside the vocabulary [0, " + vocab + ")");
            }
        }
    }

    /** Forward calls take turns: they share the workspace and the thread pool. */
    private synchronized void run(SequenceState state, int[] tokens, int offset, int n, Logits logits, Trace trace,
                                  float[] out, ModelInput input) {
        if (n < 1) {
            throw new IllegalArgumentException("a chunk needs at least one token");
        }
        int hidden = config.hiddenSize();
        checkTokens(tokens, offset, n);
        state.reserve(n);
        StageClock.recording(!StageClock.BATCH && (StageClock.DECODE ? n == 1 : n > 1));
        long clock = StageClock.start();
        long lap = StageClock.start();
        Workspace ws = workspace;
        ws.ensure(config, n);
        int start = state.position() + state.ropeDelta();
        // Split by token: 2-4 ms of a 256-token prefill on one thread (the angles' cos and sin above all).
        pool.forRange(n, 1, 64L * n * hidden, (t0, t1) -> {
            for (int t = t0; t < t1; t++) {
                int i = offset + t;
                if (input == null) {
                    weights.embedTokens().decodeRow(tokens[i], ws.x, t * hidden);
                    int p = start + t;
                    rope.angles(t, p, p, p, ws.cos, ws.sin);
                    continue;
                }
                int row = input.embeddingRow()[i];
                if (row < 0) {
                    weights.embedTokens().decodeRow(tokens[i], ws.x, t * hidden);
                } else {
                    System.arraycopy(input.embeddings(), row * hidden, ws.x, t * hidden, hidden);
                }
                rope.angles(t, input.position(0, i), input.position(1, i), input.position(2, i), ws.cos, ws.sin);
            }
        });
        if (trace != null) {
            trace.embeddings(ws.x, n);
        }
        float eps = config.rmsNormEps();
        Qwen35Weights.DecoderLayer[] layers = weights.layers();
        RmsNorm.rows(pool, ws.x, n, layers[0].inputNorm(), eps, ws.normed);
        StageClock.stop("embed+norm", lap);
        for (int l = 0; l < layers.length; l++) {
            Qwen35Weights.DecoderLayer layer = layers[l];
            switch (layer.mixer()) {
                case Qwen35Weights.GatedDeltaNet w -> deltaNet.forward(w, state, l, ws, n);
                case Qwen35Weights.GatedAttention w -> attention.forward(w, state, l, ws, n);
            }
            if (trace != null) {
                trace.mixer(l, ws.sublayerOut, n);
            }
            lap = StageClock.start();
            RmsNorm.addThenRows(pool, ws.sublayerOut, ws.x, n, layer.postAttentionNorm(), eps, ws.normed);
            StageClock.stop("residual+norm", lap);
            mlp(layer, ws, n);
            lap = StageClock.start();
            // The residual add, fused with the next layer's input norm.
            if (l + 1 < layers.length) {
                RmsNorm.addThenRows(pool, ws.sublayerOut, ws.x, n, layers[l + 1].inputNorm(), eps, ws.normed);
            } else {
                addRows(ws.sublayerOut, ws.x, n, hidden);
            }
            StageClock.stop("residual+norm", lap);
            if (trace != null) {
                trace.layer(l, ws.x, n);
            }
        }
        state.advance(n);
        if (input != null) {
            state.setRopeDelta(input.deltaAfter(offset, n, state.position()));
        }
        lap = StageClock.start();
        logits(ws, n, logits, trace, out);
        StageClock.stop("head", lap);
        StageClock.endChunk(clock);
    }

    /**
     * One decode step of several sequences at once: feeds {@code tokens[i]} to {@code states[i]} (each at its
     * own position), advances every state by one and writes the logits that follow token i to
     * {@code logits[i * vocab ..]} (a buffer of at least {@code states.length * vocab} floats the caller
     * reuses). The matrices are read once for all the sequences: their rows are multiplied as
     * {@linkplain Activations#eachToken independent tokens}, each exactly as a one-token forward call
     * multiplies it, so each sequence's logits are bit for bit what {@link #forwardLast} on it alone gives
     * (with the same kernels compiled). The conv windows, recurrent states and KV caches are per sequence.
     */
    public synchronized void forwardBatch(SequenceState[] states, int[] tokens, float[] logits) {
        int n = states.length;
        if (n < 1 || tokens.length < n) {
            throw new IllegalArgumentException("a batch needs one token per state, got " + n + " states and "
                    + tokens.length + " tokens");
        }
        int vocab = config.vocabSize();
        if (logits.length < (long) n * vocab) {
            throw new IllegalArgumentException("logits of " + n + " sequences need " + (long) n * vocab + " floats, got "
                    + logits.length);
        }
        checkTokens(tokens, 0, n);
        IdentityHashMap<SequenceState, Boolean> seen = new IdentityHashMap<>();
        for (SequenceState s : states) {
            if (seen.put(s, Boolean.TRUE) != null) {
                throw new IllegalArgumentException("the same state twice in one batch");
            }
            s.reserve(1);
        }
        int hidden = config.hiddenSize();
        StageClock.recording(StageClock.BATCH);
        long clock = StageClock.start();
        long lap = StageClock.start();
        Workspace ws = workspace;
        ws.ensure(config, n);
        pool.forRange(n, 1, 64L * n * hidden, (t0, t1) -> {
            for (int t = t0; t < t1; t++) {
                weights.embedTokens().decodeRow(tokens[t], ws.x, t * hidden);
                int p = states[t].position() + states[t].ropeDelta(); // text after an image sits at a shifted rotary position
                rope.angles(t, p, p, p, ws.cos, ws.sin);
            }
        });
        float eps = config.rmsNormEps();
        Qwen35Weights.DecoderLayer[] layers = weights.layers();
        ws.input.eachToken(true);
        try {
            RmsNorm.rows(pool, ws.x, n, layers[0].inputNorm(), eps, ws.normed);
            lap = lap("embed+norm", lap);
            for (int l = 0; l < layers.length; l++) {
                Qwen35Weights.DecoderLayer layer = layers[l];
                switch (layer.mixer()) {
                    case Qwen35Weights.GatedDeltaNet w -> deltaNet.forwardEach(w, states, l, ws);
                    case Qwen35Weights.GatedAttention w -> attention.forwardEach(w, states, l, ws);
                }
                lap = StageClock.start();
                RmsNorm.addThenRows(pool, ws.sublayerOut, ws.x, n, layer.postAttentionNorm(), eps, ws.normed);
                StageClock.stop("residual+norm", lap);
                mlp(layer, ws, n);
                lap = StageClock.start();
                if (l + 1 < layers.length) {
                    RmsNorm.addThenRows(pool, ws.sublayerOut, ws.x, n, layers[l + 1].inputNorm(), eps, ws.normed);
                } else {
                    addRows(ws.sublayerOut, ws.x, n, hidden);
                }
                StageClock.stop("residual+norm", lap);
            }
            for (SequenceState s : states) {
                s.advance(1);
            }
            lap = StageClock.start();
            RmsNorm.rows(pool, ws.x, n, weights.finalNorm(), eps, ws.normed);
            weights.lmHead().matmul(pool, ws.input.set(ws.normed, n, hidden), logits, vocab, 0);
            StageClock.stop("head", lap);
            StageClock.endChunk(clock);
        } finally {
            ws.input.eachToken(false);
        }
    }

    /** The residual: {@code into += from} over n rows of {@code width}, rows split between threads. */
    private void addRows(float[] from, float[] into, int n, int width) {
        pool.forRange(n, 1, (long) n * width,
                (t0, t1) -> VectorMath.add(from, t0 * width, into, t0 * width, (t1 - t0) * width));
    }

    /** {@code sublayerOut = down(silu(gate(x)) * up(x))} */
    private void mlp(Qwen35Weights.DecoderLayer layer, Workspace ws, int n) {
        long t = StageClock.start();
        Activations in = ws.input.set(ws.normed, n, config.hiddenSize());
        sameInput(pool, n, () -> {
            layer.mlpGate().matmul(pool, in, ws.gate);
            layer.mlpUp().matmul(pool, in, ws.up);
        });
        t = lap("mlp.gate+up", t);
        int width = config.intermediateSize();
        pool.forRange(n, 1, 8L * n * width, (t0, t1) ->
                VectorMath.siluInPlace(ws.gate, ws.up, t0 * width, (t1 - t0) * width));
        t = lap("mlp.silu", t);
        layer.mlpDown().matmul(pool, ws.input.set(ws.gate, n, width), ws.sublayerOut);
        lap("mlp.down", t);
    }

    /** Adds the time since {@code t} to {@code stage} and returns a new start (see {@link StageClock}). */
    static long lap(String stage, long t) {
        StageClock.stop(stage, t);
        return StageClock.start();
    }

    private void logits(Workspace ws, int n, Logits which, Trace trace, float[] out) {
        int hidden = config.hiddenSize();
        float eps = config.rmsNormEps();
        switch (which) {
            case NONE -> {
                if (trace != null) {
                    RmsNorm.rows(pool, ws.x, n, weights.finalNorm(), eps, ws.normed);
                    trace.finalNorm(ws.normed, n);
                }
            }
            case LAST -> {
                RmsNorm.apply(ws.x, (n - 1) * hidden, weights.finalNorm(), eps, ws.normed, 0);
                weights.lmHead().matmul(pool, ws.normed, 1, out);
            }
            default -> {
                RmsNorm.rows(pool, ws.x, n, weights.finalNorm(), eps, ws.normed);
                if (trace != null) {
                    trace.finalNorm(ws.normed, n);
                }
                weights.lmHead().matmul(pool, ws.normed, n, out);
            }
        }
    }

    /**
     * Prefills {@code tokens} following {@code plan} and returns the logits of every position [T, vocab],
     * or only of the last position when {@code allLogits} is false.
     */
    public float[] prefill(SequenceState state, int[] tokens, ChunkPlan plan, boolean allLogits) {
        return prefill(tokens.length, plan, allLogits, (done, size, mode) -> forward(state, tokens, done, size, mode));
    }

    /** As {@link #prefill(SequenceState, int[], ChunkPlan, boolean)} for a multimodal input. */
    public float[] prefill(SequenceState state, ModelInput input, ChunkPlan plan, boolean allLogits) {
        return prefill(input.length(), plan, allLogits, (done, size, mode) -> forward(state, input, done, size, mode));
    }

    private interface Chunk {
        float[] run(int offset, int n, Logits logits);
    }

    private float[] prefill(int total, ChunkPlan plan, boolean allLogits, Chunk chunk) {
        float[] out = allLogits ? new float[total * config.vocabSize()] : null;
        float[] last = null;
        int done = 0;
        var chunks = plan.split(total);
        for (int i = 0; i < chunks.size(); i++) {
            int size = chunks.get(i);
            boolean isLast = i == chunks.size() - 1;
            Logits mode = allLogits ? Logits.ALL : isLast ? Logits.LAST : Logits.NONE;
            float[] l = chunk.run(done, size, mode);
            if (allLogits) {
                System.arraycopy(l, 0, out, done * config.vocabSize(), l.length);
            } else if (isLast) {
                last = l;
            }
            done += size;
        }
        return allLogits ? out : last;
    }

    @Override
    public void close() {
        pool.close();
        if (storage != null) {
            try {
                storage.close();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }
    }
}
