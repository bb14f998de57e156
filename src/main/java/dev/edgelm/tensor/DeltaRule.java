package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * One step of the gated delta rule for one head, in place on its state {@code S} [dk, dv] (row-major):
 * <pre>
 *   S = decay * S;   S += beta * k (v - S^T k)^T;   o = S^T q
 * </pre>
 * Columns are processed one vector at a time so the running sums stay in registers, and the decay is
 * folded in ({@code (decay S)^T k = decay (S^T k)}), so a step reads the state once and reads-writes it
 * once: two passes instead of the four of the textbook order.
 */
public final class DeltaRule {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private DeltaRule() {}

    public static void step(float[] state, int sBase, int dk, int dv, float[] q, int qOff, float[] k, int kOff,
            float[] v, int vOff, float decay, float beta, float[] out, int oOff) {
        int lanes = F.length();
        int vectorCols = dv - dv % lanes;
        for (int j = 0; j < vectorCols; j += lanes) {
            FloatVector kv = FloatVector.zero(F);
            for (int i = 0; i < dk; i++) {
                kv = FloatVector.fromArray(F, state, sBase + i * dv + j).fma(FloatVector.broadcast(F, k[kOff + i]), kv);
            }
            FloatVector delta = FloatVector.fromArray(F, v, vOff + j).sub(kv.mul(decay)).mul(beta);
            FloatVector o = FloatVector.zero(F);
            for (int i = 0; i < dk; i++) {
                int at = sBase + i * dv + j;
                FloatVector updated = FloatVector.fromArray(F, state, at).mul(decay).add(delta.mul(k[kOff + i]));
                updated.intoArray(state, at);
                o = updated.fma(FloatVector.broadcast(F, q[qOff + i]), o);
            }
            o.intoArray(out, oOff + j);
        }
        for (int j = vectorCols; j < dv; j++) {
            float kv = 0f;
            for (int i = 0; i < dk; i++) {
                kv += state[sBase + i * dv + j] * k[kOff + i];
            }
            float delta = (v[vOff + j] - kv * decay) * beta;
            float o = 0f;
            for (int i = 0; i < dk; i++) {
                int at = sBase + i * dv + j;
                float updated = state[at] * decay + delta * k[kOff + i];
                state[at] = updated;
                o += updated * q[qOff + i];
            }
            out[oOff + j] = o;
        }
    }
}
