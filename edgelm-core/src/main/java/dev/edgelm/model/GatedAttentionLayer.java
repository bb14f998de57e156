package dev.edgelm.model;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.CausalAttention;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
import dev.edgelm.tensor.StageClock;
import dev.edgelm.tensor.VectorMath;
import java.util.function.IntUnaryOperator;

/**
 * Gated full attention over a chunk of tokens against the layer's KV cache.
 *
 * <pre>
 *   [query | gate] = q_proj(x)            interleaved per head
 *   q = rope(q_norm(query)); k = rope(k_norm(k_proj(x))); v = v_proj(x)
 *   o = softmax(q k^T / sqrt(head_dim), causal) v        query head h reads KV head h / (heads / kvHeads)
 *   out = o_proj(o * sigmoid(gate))
 * </pre>
 */
final class GatedAttentionLayer {
    private final Qwen35Config c;
    private final Parallel pool;
    private final RotaryEmbedding rope;
    private final Scratch.Floats scores = new Scratch.Floats();
    /** The query heads of a KV head: interleaved with their gates in the q projection, the caches' rows kvWidth. */
    private final CausalAttention.GroupLayout group;

    GatedAttentionLayer(Qwen35Config config, Parallel pool, RotaryEmbedding rope) {
        this.c = config;
        this.pool = pool;
        this.rope = rope;
        int hd = config.headDim();
        this.group = new CausalAttention.GroupLayout(config.numHeads() / config.numKvHeads(), hd, 2 * hd,
                config.numKvHeads() * hd, (float) (1.0 / Math.sqrt(hd)));
    }

    /** Reads {@code ws.normed} [n, hidden] and the rotary angles; writes {@code ws.sublayerOut} [n, hidden]. */
    void forward(Qwen35Weights.GatedAttention w, SequenceState s, int layer, Workspace ws, int n) {
        int kvWidth = c.numKvHeads() * c.headDim();
        int start = s.position();
        long t = StageClock.start();
        project(w, ws, n);
        Qwen35Model.lap("attn.proj+norm+rope", t);
        float[] keys = s.keys[layer];
        float[] values = s.values[layer];
        System.arraycopy(ws.k, 0, keys, start * kvWidth, n * kvWidth);
        System.arraycopy(ws.v, 0, values, start * kvWidth, n * kvWidth);
        // One work item per token and KV head: the group's query heads share each key and value load.
        attend(w, ws, n, start + n, i -> keys, i -> values, i -> start + i + 1);
    }

    /**
     * One decode step of several sequences: row i of {@code ws.normed} (and of the rotary angles) is the
     * next token of {@code states[i]}, which attends over its own cache. The projections see the rows as
     * {@linkplain Activations#eachToken independent tokens}; every row's result is what {@link #forward}
     * gives for that sequence alone, bit for bit.
     */
    void forwardEach(Qwen35Weights.GatedAttention w, SequenceState[] states, int layer, Workspace ws) {
        int n = states.length;
        int kvWidth = c.numKvHeads() * c.headDim();
        long clock = StageClock.start();
        project(w, ws, n);
        Qwen35Model.lap("attn.proj+norm+rope", clock);
        int maxVisible = 0;
        for (int t = 0; t < n; t++) {
            maxVisible = Math.max(maxVisible, states[t].position() + 1);
            int at = states[t].position() * kvWidth;
            System.arraycopy(ws.k, t * kvWidth, states[t].keys[layer], at, kvWidth);
            System.arraycopy(ws.v, t * kvWidth, states[t].values[layer], at, kvWidth);
        }
        // One work item per sequence and KV head, as in forward (there: per token and KV head).
        attend(w, ws, n, maxVisible, t -> states[t].keys[layer], t -> states[t].values[layer],
                t -> states[t].position() + 1);
    }

    /** {@code [query | gate] = q_proj(x)}, {@code k = k_proj(x)}, {@code v = v_proj(x)}; q and k normed and rotated. */
    private void project(Qwen35Weights.GatedAttention w, Workspace ws, int n) {
        int heads = c.numHeads();
        int kvHeads = c.numKvHeads();
        int hd = c.headDim();
        int qWidth = 2 * heads * hd;
        int kvWidth = kvHeads * hd;
        float eps = c.rmsNormEps();
        Activations in = ws.input.set(ws.normed, n, c.hiddenSize());
        Qwen35Model.sameInput(pool, n, () -> {
            w.qProj().matmul(pool, in, ws.qkv);
            w.kProj().matmul(pool, in, ws.k);
            w.vProj().matmul(pool, in, ws.v);
        });
        pool.forRange(n, 1, 8L * n * (heads + kvHeads) * hd, (t0, t1) -> {
            for (int t = t0; t < t1; t++) {
                for (int h = 0; h < heads; h++) {
                    int off = t * qWidth + h * 2 * hd;
                    RmsNorm.apply(ws.qkv, off, w.qNorm(), eps, ws.qkv, off);
                    rope.rotate(ws.qkv, off, ws.cos, ws.sin, t);
                }
                for (int h = 0; h < kvHeads; h++) {
                    int off = t * kvWidth + h * hd;
                    RmsNorm.apply(ws.k, off, w.kNorm(), eps, ws.k, off);
                    rope.rotate(ws.k, off, ws.cos, ws.sin, t);
                }
            }
        });
    }

    /**
     * {@code out = o_proj(softmax(q k^T / sqrt(head_dim)) v * sigmoid(gate))} for rows [0, n): row t reads the
     * caches {@code keys.of(t)} and {@code values.of(t)} up to {@code visible.of(t)} positions, at most
     * {@code maxVisible}.
     */
    private void attend(Qwen35Weights.GatedAttention w, Workspace ws, int n, int maxVisible, RowCache keys,
            RowCache values, IntUnaryOperator visible) {
        int heads = c.numHeads();
        int kvHeads = c.numKvHeads();
        int hd = c.headDim();
        int qWidth = 2 * heads * hd;
        int oWidth = heads * hd;
        int g = group.group();
        long clock = StageClock.start();
        pool.forRange(n * kvHeads, 1, 2L * n * heads * maxVisible * hd, (i0, i1) -> {
            float[] p = scores.get(g * maxVisible);
            for (int i = i0; i < i1; i++) {
                int t = i / kvHeads;
                int kvh = i % kvHeads;
                int h0 = kvh * g;
                int qOff = t * qWidth + h0 * 2 * hd;
                int oOff = t * oWidth + h0 * hd;
                CausalAttention.attendGroup(group, ws.qkv, qOff, keys.of(t), values.of(t), kvh * hd,
                        visible.applyAsInt(t), p, ws.core, oOff);
                for (int h = 0; h < g; h++) {
                    int gOff = qOff + h * 2 * hd + hd;
                    int o = oOff + h * hd;
                    for (int d = 0; d < hd; d++) {
                        ws.core[o + d] *= VectorMath.sigmoid(ws.qkv[gOff + d]);
                    }
                }
            }
        });
        clock = Qwen35Model.lap("attn.attend", clock);
        w.oProj().matmul(pool, ws.input.set(ws.core, n, oWidth), ws.sublayerOut);
        Qwen35Model.lap("attn.out", clock);
    }

    /** The key or value cache that row t attends over. */
    @FunctionalInterface
    private interface RowCache {
        float[] of(int t);
    }
}
