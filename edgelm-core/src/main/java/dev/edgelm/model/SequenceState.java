package dev.edgelm.model;

import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;

/**
 * Everything one sequence carries between forward calls: per linear-attention layer the causal conv
 * window (the last kernel-1 inputs) and the recurrent state [Hv, Dk, Dv] (rows padded, see
 * {@link #recurrentRowStride}); per full-attention layer the
 * key and value cache [positions, kvHeads * headDim], grown on demand up to {@link #capacity()}.
 *
 * <p>{@link #copy()} is a deep copy (a fork of the conversation). {@link #checkpoint()} keeps only the
 * fixed-size part (conv windows and recurrent states, a few MiB for a real model) plus the position;
 * {@link #rollback} restores it and truncates the KV cache to that position, which is valid as long as
 * this state still holds the same token prefix up to the checkpoint.
 */
public final class SequenceState {
    private static final int INITIAL_KV_POSITIONS = 256;

    private final Qwen35Config config;
    private final int capacity;
    private int position;
    /** Rotary position of the next token minus {@link #position}: nonzero after an image (see {@link ModelInput}). */
    private int ropeDelta;
    final float[][] convWindow;
    final float[][] recurrent;
    final float[][] keys;
    final float[][] values;
    private int kvAllocated;

    /** The fixed-size part of a state at one position. */
    public static final class Checkpoint {
        private final int position;
        private final int ropeDelta;
        private final float[][] convWindow;
        private final float[][] recurrent;
        /** With {@link #snapshot()}: the KV cache up to the position; null for a plain checkpoint. */
        private final float[][] keys;
        private final float[][] values;

        private Checkpoint(int position, int ropeDelta, float[][] convWindow, float[][] recurrent) {
            this(position, ropeDelta, convWindow, recurrent, null, null);
        }

        private Checkpoint(int position, int ropeDelta, float[][] convWindow, float[][] recurrent, float[][] keys, float[][] values) {
            this.position = position;
            this.ropeDelta = ropeDelta;
            this.convWindow = convWindow;
            this.recurrent = recurrent;
            this.keys = keys;
            this.values = values;
        }

        /** Whether this holds the KV cache too ({@link #snapshot()}), so that any state can {@link #restore} it. */
        public boolean hasKvCache() {
            return keys != null;
        }

        public int position() {
            return position;
        }

        public long bytes() {
            long n = 0;
            for (float[] a : convWindow) {
                n += a == null ? 0 : 4L * a.length;
            }
            for (float[] a : recurrent) {
                n += a == null ? 0 : 4L * a.length;
            }
            if (keys != null) {
                for (int i = 0; i < keys.length; i++) {
                    n += keys[i] == null ? 0 : 4L * (keys[i].length + values[i].length);
                }
            }
            return n;
        }
    }

    public SequenceState(Qwen35Config config, int capacity) {
        if (capacity < 1) {
            throw new EdgeLmException("context capacity must be at least 1 token, got " + capacity);
        }
        this.config = config;
        this.capacity = capacity;
        int layers = config.numLayers();
        convWindow = new float[layers][];
        recurrent = new float[layers][];
        keys = new float[layers][];
        values = new float[layers][];
        kvAllocated = Math.min(capacity, INITIAL_KV_POSITIONS);
        int kvWidth = config.numKvHeads() * config.headDim();
        for (int i = 0; i < layers; i++) {
            if (config.fullAttention()[i]) {
                keys[i] = new float[kvAllocated * kvWidth];
                values[i] = new float[kvAllocated * kvWidth];
            } else {
                convWindow[i] = new float[(config.convKernel() - 1) * config.convDim()];
                recurrent[i] = new float[config.linearValueHeads() * config.linearKeyDim() * recurrentRowStride(config)];
            }
        }
    }

    /**
     * Floats between consecutive rows of a head's recurrent state [Dk, Dv]: Dv plus one 64-byte line. With
     * rows exactly Dv = 128 floats (512 bytes) apart, the rows of a column strip fall into only 8 of L1's 64
     * sets and evict each other, so the delta rule's strip, meant to stay in L1 for a whole chunk, streamed
     * from L2 on every pass; one line of padding spreads them over every set.
     */
    static int recurrentRowStride(Qwen35Config config) {
        return config.linearValueDim() + 16;
    }

    private SequenceState(SequenceState other) {
        this.config = other.config;
        this.capacity = other.capacity;
        this.position = other.position;
        this.ropeDelta = other.ropeDelta;
        this.kvAllocated = other.kvAllocated;
        this.convWindow = deepCopy(other.convWindow);
        this.recurrent = deepCopy(other.recurrent);
        this.keys = deepCopy(other.keys);
        this.values = deepCopy(other.values);
    }

    private static float[][] deepCopy(float[][] a) {
        float[][] out = new float[a.length][];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i] == null ? null : a[i].clone();
        }
        return out;
    }

    public Qwen35Config config() {
        return config;
    }

    /** Tokens consumed so far; the position of the next token. */
    public int position() {
        return position;
    }

    public int capacity() {
        return capacity;
    }

    /**
     * The rotary position of the next plain token minus {@link #position()}: 0 for text, negative after an image
     * (its tokens advance the position by their count but the rotary positions only by the grid's larger side).
     */
    public int ropeDelta() {
        return ropeDelta;
    }

    void setRopeDelta(int delta) {
        ropeDelta = delta;
    }

    public SequenceState copy() {
        return new SequenceState(this);
    }

    public Checkpoint checkpoint() {
        return new Checkpoint(position, ropeDelta, deepCopy(convWindow), deepCopy(recurrent));
    }

    /**
     * The whole state at its position: the fixed-size part and the KV cache up to the position (no spare
     * capacity), so that {@link #restore} can bring any state of this model to it, not only this one.
     */
    public Checkpoint snapshot() {
        int kvWidth = config.numKvHeads() * config.headDim();
        float[][] k = new float[keys.length][];
        float[][] v = new float[values.length][];
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != null) {
                k[i] = Arrays.copyOf(keys[i], position * kvWidth);
                v[i] = Arrays.copyOf(values[i], position * kvWidth);
            }
        }
        return new Checkpoint(position, ropeDelta, deepCopy(convWindow), deepCopy(recurrent), k, v);
    }

    /**
     * Makes this state exactly the one {@code snapshot} was taken from, at its position (whatever this state
     * held before). The snapshot must come from {@link #snapshot()} of a state of the same model and fit this
     * state's capacity.
     */
    public void restore(Checkpoint snapshot) {
        if (snapshot.keys == null) {
            throw new IllegalArgumentException("a checkpoint without its KV cache can only be rolled back to");
        }
        if (snapshot.position > capacity) {
            throw new EdgeLmException("a snapshot of " + snapshot.position + " tokens does not fit a context of " + capacity);
        }
        position = 0;
        reserve(snapshot.position);
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != null) {
                System.arraycopy(snapshot.keys[i], 0, keys[i], 0, snapshot.keys[i].length);
                System.arraycopy(snapshot.values[i], 0, values[i], 0, snapshot.values[i].length);
            }
        }
        position = snapshot.position;
        rollback(snapshot);
    }

    /** Returns to {@code checkpoint}'s position; the KV cache beyond it is dropped. */
    public void rollback(Checkpoint checkpoint) {
        if (checkpoint.position > position) {
            throw new IllegalArgumentException("checkpoint at " + checkpoint.position + " is ahead of the state at " + position);
        }
        for (int i = 0; i < convWindow.length; i++) {
            if (convWindow[i] != null) {
                System.arraycopy(checkpoint.convWindow[i], 0, convWindow[i], 0, convWindow[i].length);
                System.arraycopy(checkpoint.recurrent[i], 0, recurrent[i], 0, recurrent[i].length);
            }
        }
        position = checkpoint.position;
        ropeDelta = checkpoint.ropeDelta;
    }

    /**
     * Writes the state at its position: the conv windows and recurrent states, and the keys and values of the
     * positions held ({@link #readFrom} reads it back into a state of the same config and enough capacity).
     */
    public void writeTo(java.io.DataOutputStream out) throws java.io.IOException {
        out.writeInt(position);
        out.writeInt(ropeDelta);
        int kvWidth = config.numKvHeads() * config.headDim();
        for (int i = 0; i < convWindow.length; i++) {
            if (convWindow[i] != null) {
                writeFloats(out, convWindow[i], convWindow[i].length);
                writeFloats(out, recurrent[i], recurrent[i].length);
            } else {
                writeFloats(out, keys[i], position * kvWidth);
                writeFloats(out, values[i], position * kvWidth);
            }
        }
    }

    /** Replaces this state with one {@link #writeTo} wrote; fails (state reset) when it does not fit. */
    public void readFrom(java.io.DataInputStream in) throws java.io.IOException {
        int saved = in.readInt();
        int delta = in.readInt();
        reset();
        if (saved < 0 || saved > capacity) {
            throw new EdgeLmException("the saved state holds " + saved + " tokens; this context holds " + capacity);
        }
        reserve(saved);
        int kvWidth = config.numKvHeads() * config.headDim();
        for (int i = 0; i < convWindow.length; i++) {
            if (convWindow[i] != null) {
                readFloats(in, convWindow[i], convWindow[i].length);
                readFloats(in, recurrent[i], recurrent[i].length);
            } else {
                readFloats(in, keys[i], saved * kvWidth);
                readFloats(in, values[i], saved * kvWidth);
            }
        }
        position = saved;
        ropeDelta = delta; // text after an image keeps its shifted rotary positions
    }

    private static void writeFloats(java.io.DataOutputStream out, float[] a, int n) throws java.io.IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(a, 0, n);
        out.write(b.array());
    }

    private static void readFloats(java.io.DataInputStream in, float[] a, int n) throws java.io.IOException {
        byte[] bytes = new byte[4 * n];
        in.readFully(bytes);
        java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(a, 0, n);
    }

    /** Back to an empty sequence. */
    public void reset() {
        position = 0;
        ropeDelta = 0;
        for (int i = 0; i < convWindow.length; i++) {
            if (convWindow[i] != null) {
                Arrays.fill(convWindow[i], 0f);
                Arrays.fill(recurrent[i], 0f);
            }
        }
    }

    /** Makes room for {@code n} more tokens, or explains why there is none. */
    void reserve(int n) {
        long needed = (long) position + n;
        if (needed > capacity) {
            throw new EdgeLmException("context capacity exceeded: " + needed + " tokens needed, capacity is "
                    + capacity + " (" + position + " in use)");
        }
        if (needed > kvAllocated) {
            int grown = (int) Math.min(capacity, Math.max(needed, 2L * kvAllocated));
            int kvWidth = config.numKvHeads() * config.headDim();
            for (int i = 0; i < keys.length; i++) {
                if (keys[i] != null) {
                    keys[i] = Arrays.copyOf(keys[i], grown * kvWidth);
                    values[i] = Arrays.copyOf(values[i], grown * kvWidth);
                }
            }
            kvAllocated = grown;
        }
    }

    void advance(int n) {
        position += n;
    }
}
