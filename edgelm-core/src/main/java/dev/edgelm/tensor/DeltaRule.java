package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The gated delta rule for one head over a run of tokens, in place on its state {@code S} [dk, dv]
 * (row-major). Per token:
 * <pre>
 *   S = decay * S;   S += beta * k (v - S^T k)^T;   o = S^T q
 * </pre>
 * The decay is folded in ({@code (decay S)^T k = decay (S^T k)}), so a step reads the state once and
 * reads-writes it once: two passes instead of the four of the textbook order; in four-vector strips the
 * read pass of the next token rides along with the update pass (see {@link #strip4Run}), one pass a token.
 *
 * <p>Columns of S evolve independently (column j needs only {@code v[j]} besides k and q), so the scan
 * walks the state in strips of four vectors of columns and runs every token of the run through one strip
 * before moving to the next: a strip (32 KiB at dk = 128 with 16-lane vectors) stays in L1 for the whole
 * run, where the full 64 KiB state would stream from L2 twice per token (provided the rows are not 512
 * bytes apart: such rows fall into 8 of L1's 64 sets and the strip evicts itself; the model pads them by a
 * line, which made a 256-token scan 1.45-1.75x faster on one core); and the four column vectors give
 * four independent FMA chains per pass, where one vector left each pass waiting on FMA latency. Each
 * column's sums run in the same order as in a one-vector loop, so the result does not depend on the strip
 * width or on how many tokens a run holds.
 */
public final class DeltaRule {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();

    private DeltaRule() {}

    /**
     * The shape of a scan and the strides of its operands, the same for every head of a layer: the state is
     * {@code keyDim} rows of {@code valueDim} columns, row i starting {@code i * stateStride} floats in (at least
     * valueDim; a padded stride keeps a column strip in L1, see the class comment); token t's q, k and v start
     * {@code t * qkvStride} floats further than token 0's, its decay and beta {@code t * gateStride}, its output
     * {@code t * outStride}.
     */
    public record Layout(int keyDim, int valueDim, int stateStride, int qkvStride, int gateStride, int outStride) {}

    /**
     * Where one head's operands start (token 0): its state in the state array, its q, k and v in the qkv
     * array, its decay and beta in theirs, its output in the output array.
     */
    public record Head(int state, int q, int k, int v, int gate, int out) {}

    /**
     * Runs tokens {@code [0, n)} of head {@code at} through the delta rule, in place on its state; writes
     * each token's {@code o = S^T q} (valueDim floats) to {@code out}.
     */
    public static void scan(Layout layout, int n, float[] state, float[] qkv, float[] decay, float[] beta,
            float[] out, Head at) {
        int dk = layout.keyDim();
        int dv = layout.valueDim();
        int stride = layout.stateStride();
        int rowStride = layout.qkvStride();
        int gateStride = layout.gateStride();
        int outStride = layout.outStride();
        int j = 0;
        for (; j + 4 * L <= dv; j += 4 * L) {
            strip4Run(state, at.state() + j, dk, stride, n, qkv, rowStride, at.q(), at.k(), at.v() + j,
                    decay, beta, gateStride, at.gate(), out, outStride, at.out() + j);
        }
        for (; j + L <= dv; j += L) {
            for (int t = 0; t < n; t++) {
                int row = t * rowStride;
                int g = t * gateStride + at.gate();
                strip1(state, at.state() + j, dk, stride, qkv, row + at.q(), row + at.k(), row + at.v() + j,
                        decay[g], beta[g], out, t * outStride + at.out() + j);
            }
        }
        for (; j < dv; j++) {
            for (int t = 0; t < n; t++) {
                int row = t * rowStride;
                int g = t * gateStride + at.gate();
                column(state, at.state() + j, dk, stride, qkv, row + at.q(), row + at.k(), row + at.v() + j,
                        decay[g], beta[g], out, t * outStride + at.out() + j);
            }
        }
    }

    /**
     * Every token of the run on columns {@code [s, s + 4L)} of the state (s = sBase + first column). A token
     * needs {@code S^T k} of the state its predecessor left, which is the state the predecessor's update pass
     * writes: so that pass also sums the next token's {@code S^T k}, from the values it stores, in the same
     * order a separate pass would (same bits), and each token after the first reads the strip once instead
     * of twice. The last token sums against its own key, discarded, to keep the loop free of branches.
     */
    private static void strip4Run(float[] state, int s, int dk, int stride, int n, float[] qkv, int rowStride,
            int qOff, int kOff, int vOff, float[] decay, float[] beta, int gateStride, int gateOff,
            float[] out, int outStride, int oOff) {
        FloatVector kv0 = FloatVector.zero(F);
        FloatVector kv1 = FloatVector.zero(F);
        FloatVector kv2 = FloatVector.zero(F);
        FloatVector kv3 = FloatVector.zero(F);
        for (int i = 0; i < dk; i++) {
            int at = s + i * stride;
            FloatVector ki = FloatVector.broadcast(F, qkv[kOff + i]);
            kv0 = FloatVector.fromArray(F, state, at).fma(ki, kv0);
            kv1 = FloatVector.fromArray(F, state, at + L).fma(ki, kv1);
            kv2 = FloatVector.fromArray(F, state, at + 2 * L).fma(ki, kv2);
            kv3 = FloatVector.fromArray(F, state, at + 3 * L).fma(ki, kv3);
        }
        for (int t = 0; t < n; t++) {
            int row = t * rowStride;
            int q = row + qOff;
            int k = row + kOff;
            int v = row + vOff;
            int kNext = (t + 1 < n ? row + rowStride : row) + kOff;
            int g = t * gateStride + gateOff;
            float decayT = decay[g];
            float betaT = beta[g];
            FloatVector d0 = FloatVector.fromArray(F, qkv, v).sub(kv0.mul(decayT)).mul(betaT);
            FloatVector d1 = FloatVector.fromArray(F, qkv, v + L).sub(kv1.mul(decayT)).mul(betaT);
            FloatVector d2 = FloatVector.fromArray(F, qkv, v + 2 * L).sub(kv2.mul(decayT)).mul(betaT);
            FloatVector d3 = FloatVector.fromArray(F, qkv, v + 3 * L).sub(kv3.mul(decayT)).mul(betaT);
            FloatVector o0 = FloatVector.zero(F);
            FloatVector o1 = FloatVector.zero(F);
            FloatVector o2 = FloatVector.zero(F);
            FloatVector o3 = FloatVector.zero(F);
            kv0 = FloatVector.zero(F);
            kv1 = FloatVector.zero(F);
            kv2 = FloatVector.zero(F);
            kv3 = FloatVector.zero(F);
            for (int i = 0; i < dk; i++) {
                int at = s + i * stride;
                float ki = qkv[k + i];
                FloatVector qi = FloatVector.broadcast(F, qkv[q + i]);
                FloatVector kn = FloatVector.broadcast(F, qkv[kNext + i]);
                FloatVector u0 = FloatVector.fromArray(F, state, at).mul(decayT).add(d0.mul(ki));
                FloatVector u1 = FloatVector.fromArray(F, state, at + L).mul(decayT).add(d1.mul(ki));
                FloatVector u2 = FloatVector.fromArray(F, state, at + 2 * L).mul(decayT).add(d2.mul(ki));
                FloatVector u3 = FloatVector.fromArray(F, state, at + 3 * L).mul(decayT).add(d3.mul(ki));
                u0.intoArray(state, at);
                u1.intoArray(state, at + L);
                u2.intoArray(state, at + 2 * L);
                u3.intoArray(state, at + 3 * L);
                o0 = u0.fma(qi, o0);
                o1 = u1.fma(qi, o1);
                o2 = u2.fma(qi, o2);
                o3 = u3.fma(qi, o3);
                kv0 = u0.fma(kn, kv0);
                kv1 = u1.fma(kn, kv1);
                kv2 = u2.fma(kn, kv2);
                kv3 = u3.fma(kn, kv3);
            }
            int o = t * outStride + oOff;
            o0.intoArray(out, o);
            o1.intoArray(out, o + L);
            o2.intoArray(out, o + 2 * L);
            o3.intoArray(out, o + 3 * L);
        }
    }

    /** One token on columns {@code [s, s + L)}. */
    private static void strip1(float[] state, int s, int dk, int stride, float[] qkv, int q, int k, int v,
            float decay, float beta, float[] out, int o) {
        FloatVector kv = FloatVector.zero(F);
        for (int i = 0; i < dk; i++) {
            kv = FloatVector.fromArray(F, state, s + i * stride).fma(FloatVector.broadcast(F, qkv[k + i]), kv);
        }
        FloatVector delta = FloatVector.fromArray(F, qkv, v).sub(kv.mul(decay)).mul(beta);
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < dk; i++) {
            int at = s + i * stride;
            FloatVector updated = FloatVector.fromArray(F, state, at).mul(decay).add(delta.mul(qkv[k + i]));
            updated.intoArray(state, at);
            acc = updated.fma(FloatVector.broadcast(F, qkv[q + i]), acc);
        }
        acc.intoArray(out, o);
    }

    /** One token on the single column at {@code s}: the vector loops' arithmetic (FMAs included) on one lane. */
    private static void column(float[] state, int s, int dk, int stride, float[] qkv, int q, int k, int v,
            float decay, float beta, float[] out, int o) {
        float kv = 0f;
        for (int i = 0; i < dk; i++) {
            kv = Math.fma(state[s + i * stride], qkv[k + i], kv);
        }
        float delta = (qkv[v] - kv * decay) * beta;
        float acc = 0f;
        for (int i = 0; i < dk; i++) {
            int at = s + i * stride;
            float updated = state[at] * decay + delta * qkv[k + i];
            state[at] = updated;
            acc = Math.fma(updated, qkv[q + i], acc);
        }
        out[o] = acc;
    }
}
