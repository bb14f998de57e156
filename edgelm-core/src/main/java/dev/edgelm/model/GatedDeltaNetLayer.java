package dev.edgelm.model;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.DeltaRule;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.StageClock;
import dev.edgelm.tensor.VectorMath;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Linear attention (Gated DeltaNet) over a chunk of tokens, carrying the conv window and the recurrent
 * state in {@link SequenceState}.
 *
 * <pre>
 *   [q | k | v] = silu(causal_depthwise_conv(in_proj_qkv(x)))      heads contiguous
 *   q, k        = l2norm per head; q *= 1/sqrt(Dk)
 *   beta        = sigmoid(in_proj_b(x));  g = -exp(A_log) * softplus(in_proj_a(x) + dt_bias)
 *   per value head h (key head kh = keyHeadOfValueHead(h)), per token, with S [Dk, Dv]:
 *       S = exp(g) S;  S += beta k (v - S^T k)^T;  o = S^T q
 *   out         = out_proj(rmsnorm(o) * w * silu(in_proj_z(x)))     per value head
 * </pre>
 */
final class GatedDeltaNetLayer {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private final Qwen35Config c;
    private final Parallel pool;
    /** Every value head's state [Dk, Dv] (rows padded, see SequenceState), qkv rows of convDim, gates per head. */
    private final DeltaRule.Layout scan;

    GatedDeltaNetLayer(Qwen35Config config, Parallel pool) {
        this.c = config;
        this.pool = pool;
        int hv = config.linearValueHeads();
        this.scan = new DeltaRule.Layout(config.linearKeyDim(), config.linearValueDim(),
                SequenceState.recurrentRowStride(config), config.convDim(), hv, hv * config.linearValueDim());
    }

    /** Reads {@code ws.normed} [n, hidden], writes {@code ws.sublayerOut} [n, hidden]. */
    void forward(Qwen35Weights.GatedDeltaNet w, SequenceState s, int layer, Workspace ws, int n) {
        int convDim = c.convDim();
        int hv = c.linearValueHeads();
        long t = StageClock.start();
        Activations in = ws.input.set(ws.normed, n, c.hiddenSize());
        Qwen35Model.sameInput(pool, n, () -> {
            w.inProjQkv().matmul(pool, in, ws.qkv);
            w.inProjZ().matmul(pool, in, ws.z);
            w.inProjB().matmul(pool, in, ws.beta);
            w.inProjA().matmul(pool, in, ws.decay);
        });
        t = Qwen35Model.lap("dn.proj", t);
        // Per-token work below is split between threads by token (each result depends on its token only).
        gates(w, ws, n, hv);
        t = Qwen35Model.lap("dn.gates", t);
        convolve(w.convTaps(), s.convWindow[layer], ws, 0, n, convDim);
        t = Qwen35Model.lap("dn.conv", t);
        pool.forRange(n, 1, 2L * n * convDim, (t0, t1) -> normalizeQueriesAndKeys(ws.qkv, t0, t1, convDim));
        t = Qwen35Model.lap("dn.qk-l2norm", t);
        float[] state = s.recurrent[layer];
        pool.forRange(hv, 1, 2L * n * hv * c.linearKeyDim() * c.linearValueDim(), (h0, h1) -> {
            for (int h = h0; h < h1; h++) {
                recurrence(state, h, ws, 0, n, convDim);
            }
        });
        t = Qwen35Model.lap("dn.scan", t);
        int rows = n * hv;
        pool.forRange(rows, 1, 8L * rows * c.linearValueDim(), (r0, r1) -> gatedNorm(w.norm(), ws, r0, r1));
        t = Qwen35Model.lap("dn.gated-norm", t);
        w.outProj().matmul(pool, ws.input.set(ws.core, n, c.linearValueTotal()), ws.sublayerOut);
        Qwen35Model.lap("dn.out", t);
    }

    /**
     * One decode step of several sequences: row i of {@code ws.normed} is the next token of
     * {@code states[i]}. The projections see the rows as {@linkplain Activations#eachToken independent
     * tokens}; the conv window and the recurrent state are each sequence's own. Every row's result is what
     * {@link #forward} gives for that sequence alone, bit for bit.
     */
    void forwardEach(Qwen35Weights.GatedDeltaNet w, SequenceState[] states, int layer, Workspace ws) {
        int n = states.length;
        int convDim = c.convDim();
        int hv = c.linearValueHeads();
        long t = StageClock.start();
        Activations in = ws.input.set(ws.normed, n, c.hiddenSize());
        w.inProjQkv().matmul(pool, in, ws.qkv);
        w.inProjZ().matmul(pool, in, ws.z);
        w.inProjB().matmul(pool, in, ws.beta);
        w.inProjA().matmul(pool, in, ws.decay);
        t = Qwen35Model.lap("dn.proj", t);
        gates(w, ws, n, hv);
        t = Qwen35Model.lap("dn.gates", t);
        for (int i = 0; i < n; i++) {
            convolve(w.convTaps(), states[i].convWindow[layer], ws, i, 1, convDim);
        }
        t = Qwen35Model.lap("dn.conv", t);
        pool.forRange(n, 1, 2L * n * convDim, (t0, t1) -> normalizeQueriesAndKeys(ws.qkv, t0, t1, convDim));
        t = Qwen35Model.lap("dn.qk-l2norm", t);
        // One work item per (sequence, value head).
        pool.forRange(n * hv, 1, 2L * n * hv * c.linearKeyDim() * c.linearValueDim(), (i0, i1) -> {
            for (int i = i0; i < i1; i++) {
                recurrence(states[i / hv].recurrent[layer], i % hv, ws, i / hv, 1, convDim);
            }
        });
        t = Qwen35Model.lap("dn.scan", t);
        int rows = n * hv;
        pool.forRange(rows, 1, 8L * rows * c.linearValueDim(), (r0, r1) -> gatedNorm(w.norm(), ws, r0, r1));
        t = Qwen35Model.lap("dn.gated-norm", t);
        w.outProj().matmul(pool, ws.input.set(ws.core, n, c.linearValueTotal()), ws.sublayerOut);
        Qwen35Model.lap("dn.out", t);
    }

    /** {@code beta = sigmoid(b)}, {@code decay = exp(-exp(A_log) * softplus(a + dt_bias))} in place, split by token. */
    private void gates(Qwen35Weights.GatedDeltaNet w, Workspace ws, int n, int hv) {
        pool.forRange(n, 1, 64L * n * hv, (t0, t1) -> {
            for (int i = t0 * hv; i < t1 * hv; i++) {
                int h = i % hv;
                ws.beta[i] = VectorMath.sigmoid(ws.beta[i]);
                ws.decay[i] = (float) Math.exp(w.negA()[h] * VectorMath.softplus(ws.decay[i] + w.dtBias()[h]));
            }
        });
    }

    /**
     * Causal depthwise conv with kernel K, then SiLU, in place on {@code ws.qkv}. The previous K-1 inputs
     * come from {@code window}, which is then replaced by the last K-1 inputs of this chunk.
     * {@code taps} is the kernel tap-major [K, convDim], so channels vectorise. Tokens run last to first:
     * output t reads inputs t-K+1..t, which a descending pass has not overwritten yet, so no copy of the
     * chunk's inputs is needed (a 6 MB copy per layer on one thread for a 256-token 0.8B chunk).
     */
    private void convolve(float[] taps, float[] window, Workspace ws, int row0, int n, int convDim) {
        int k = c.convKernel();
        int keep = k - 1;
        // The next window, the last K-1 rows of [window; inputs], saved before the inputs are overwritten.
        float[] next = ws.nextConvWindow;
        for (int r = 0; r < keep; r++) {
            int src = n + r;
            if (src < keep) {
                System.arraycopy(window, src * convDim, next, r * convDim, convDim);
            } else {
                System.arraycopy(ws.qkv, (row0 + src - keep) * convDim, next, r * convDim, convDim);
            }
        }
        int lanes = F.length();
        float[] qkv = ws.qkv;
        int base = row0 * convDim; // the chunk's rows start here in qkv
        pool.forRange(convDim, lanes, (long) n * convDim * k, (c0, c1) -> {
            for (int t = n - 1; t >= 0; t--) {
                int ch = c0;
                for (; ch + lanes <= c1; ch += lanes) {
                    FloatVector acc = FloatVector.zero(F);
                    for (int j = 0; j < k; j++) {
                        int r = t - keep + j;
                        FloatVector tap = FloatVector.fromArray(F, taps, j * convDim + ch);
                        if (r >= 0) {
                            acc = tap.fma(FloatVector.fromArray(F, qkv, base + r * convDim + ch), acc);
                        } else {
                            acc = tap.fma(FloatVector.fromArray(F, window, (r + keep) * convDim + ch), acc);
                        }
                    }
                    acc.intoArray(qkv, base + t * convDim + ch);
                }
                for (; ch < c1; ch++) {
                    float acc = 0f;
                    for (int j = 0; j < k; j++) {
                        int r = t - keep + j;
                        float in = r >= 0 ? qkv[base + r * convDim + ch] : window[(r + keep) * convDim + ch];
                        acc += taps[j * convDim + ch] * in;
                    }
                    qkv[base + t * convDim + ch] = acc;
                }
                VectorMath.siluInPlace(qkv, null, base + t * convDim + c0, c1 - c0);
            }
        });
        System.arraycopy(next, 0, window, 0, keep * convDim);
    }

    /** L2-normalises each query and key head of tokens [t0, t1); queries are also scaled by 1/sqrt(Dk). */
    private void normalizeQueriesAndKeys(float[] qkv, int t0, int t1, int convDim) {
        int hk = c.linearKeyHeads();
        int dk = c.linearKeyDim();
        float qScale = (float) (1.0 / Math.sqrt(dk));
        for (int t = t0; t < t1; t++) {
            for (int head = 0; head < 2 * hk; head++) {
                int off = t * convDim + head * dk;
                float inv = (float) (1.0 / Math.sqrt(VectorMath.sumOfSquares(qkv, off, dk) + 1e-6f));
                if (head < hk) {
                    inv *= qScale;
                }
                VectorMath.scale(qkv, off, dk, inv);
            }
        }
    }

    /** The delta rule for value head {@code h} over the chunk's tokens (rows row0 .. row0+n of ws), in order. */
    private void recurrence(float[] state, int h, Workspace ws, int row0, int n, int convDim) {
        int hk = c.linearKeyHeads();
        int hv = c.linearValueHeads();
        int dk = c.linearKeyDim();
        int dv = c.linearValueDim();
        int kh = c.keyHeadOfValueHead(h);
        int q = row0 * convDim; // [q heads | k heads | v heads] per token
        DeltaRule.Head head = new DeltaRule.Head(h * dk * scan.stateStride(),
                q + kh * dk, q + hk * dk + kh * dk, q + 2 * hk * dk + h * dv,
                row0 * hv + h, row0 * hv * dv + h * dv);
        DeltaRule.scan(scan, n, state, ws.qkv, ws.decay, ws.beta, ws.core, head);
    }

    /** {@code core = rmsnorm(core) * w * silu(z)} per value head, for rows [r0, r1) of (token, head). */
    private void gatedNorm(float[] w, Workspace ws, int r0, int r1) {
        int dv = c.linearValueDim();
        float eps = c.rmsNormEps();
        for (int r = r0; r < r1; r++) {
            int off = r * dv;
            float inv = RmsNorm.inverseRms(ws.core, off, dv, eps);
            VectorMath.siluInPlace(ws.z, null, off, dv);
            for (int j = 0; j < dv; j++) {
                ws.core[off + j] = (ws.core[off + j] * inv) * w[j] * ws.z[off + j];
            }
        }
    }
}
