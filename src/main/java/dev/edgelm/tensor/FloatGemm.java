package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The register-tiled float32 micro-kernel of prefill: {@code out[t][r] = w[r] . x[t]} for a tile of
 * {@link #ROWS} decoded weight rows against every token of a chunk, {@link #TOKENS} tokens at a time.
 * Each step loads 4 weight vectors and 4 activation vectors and issues 16 FMAs into 16 accumulators, so
 * the loads (from L1/L2) stay below the FMA rate; one vector dot per (row, token) would need two loads
 * per FMA.
 */
final class FloatGemm {
    static final int ROWS = 4;
    static final int TOKENS = 4;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private FloatGemm() {}

    /**
     * {@code w} holds {@link #ROWS} rows of length {@code cols} back to back; token t's activations start at
     * {@code x[xBase + t * cols]}; writes {@code out[t * outStride + outOff + row0 + i]} for i < ROWS, t < n.
     */
    static void tile(float[] w, int cols, float[] x, int xBase, int n, float[] out, int outStride, int outOff, int row0) {
        int bound = F.loopBound(cols);
        int w0 = 0;
        int w1 = cols;
        int w2 = 2 * cols;
        int w3 = 3 * cols;
        int t = 0;
        for (; t + TOKENS <= n; t += TOKENS) {
            int x0 = xBase + t * cols;
            int x1 = x0 + cols;
            int x2 = x1 + cols;
            int x3 = x2 + cols;
            FloatVector a00 = FloatVector.zero(F), a01 = FloatVector.zero(F), a02 = FloatVector.zero(F), a03 = FloatVector.zero(F);
            FloatVector a10 = FloatVector.zero(F), a11 = FloatVector.zero(F), a12 = FloatVector.zero(F), a13 = FloatVector.zero(F);
            FloatVector a20 = FloatVector.zero(F), a21 = FloatVector.zero(F), a22 = FloatVector.zero(F), a23 = FloatVector.zero(F);
            FloatVector a30 = FloatVector.zero(F), a31 = FloatVector.zero(F), a32 = FloatVector.zero(F), a33 = FloatVector.zero(F);
            int k = 0;
            for (; k < bound; k += F.length()) {
                FloatVector r0 = FloatVector.fromArray(F, w, w0 + k);
                FloatVector r1 = FloatVector.fromArray(F, w, w1 + k);
                FloatVector r2 = FloatVector.fromArray(F, w, w2 + k);
                FloatVector r3 = FloatVector.fromArray(F, w, w3 + k);
                FloatVector v = FloatVector.fromArray(F, x, x0 + k);
                a00 = r0.fma(v, a00);
                a10 = r1.fma(v, a10);
                a20 = r2.fma(v, a20);
                a30 = r3.fma(v, a30);
                v = FloatVector.fromArray(F, x, x1 + k);
                a01 = r0.fma(v, a01);
                a11 = r1.fma(v, a11);
                a21 = r2.fma(v, a21);
                a31 = r3.fma(v, a31);
                v = FloatVector.fromArray(F, x, x2 + k);
                a02 = r0.fma(v, a02);
                a12 = r1.fma(v, a12);
                a22 = r2.fma(v, a22);
                a32 = r3.fma(v, a32);
                v = FloatVector.fromArray(F, x, x3 + k);
                a03 = r0.fma(v, a03);
                a13 = r1.fma(v, a13);
                a23 = r2.fma(v, a23);
                a33 = r3.fma(v, a33);
            }
            int o = outOff + row0;
            int s0 = t * outStride + o;
            int s1 = s0 + outStride;
            int s2 = s1 + outStride;
            int s3 = s2 + outStride;
            out[s0] = sum(a00) + tail(w, w0, x, x0, k, cols);
            out[s0 + 1] = sum(a10) + tail(w, w1, x, x0, k, cols);
            out[s0 + 2] = sum(a20) + tail(w, w2, x, x0, k, cols);
            out[s0 + 3] = sum(a30) + tail(w, w3, x, x0, k, cols);
            out[s1] = sum(a01) + tail(w, w0, x, x1, k, cols);
            out[s1 + 1] = sum(a11) + tail(w, w1, x, x1, k, cols);
            out[s1 + 2] = sum(a21) + tail(w, w2, x, x1, k, cols);
            out[s1 + 3] = sum(a31) + tail(w, w3, x, x1, k, cols);
            out[s2] = sum(a02) + tail(w, w0, x, x2, k, cols);
            out[s2 + 1] = sum(a12) + tail(w, w1, x, x2, k, cols);
            out[s2 + 2] = sum(a22) + tail(w, w2, x, x2, k, cols);
            out[s2 + 3] = sum(a32) + tail(w, w3, x, x2, k, cols);
            out[s3] = sum(a03) + tail(w, w0, x, x3, k, cols);
            out[s3 + 1] = sum(a13) + tail(w, w1, x, x3, k, cols);
            out[s3 + 2] = sum(a23) + tail(w, w2, x, x3, k, cols);
            out[s3 + 3] = sum(a33) + tail(w, w3, x, x3, k, cols);
        }
        for (; t < n; t++) {
            int xo = xBase + t * cols;
            int o = t * outStride + outOff + row0;
            for (int i = 0; i < ROWS; i++) {
                out[o + i] = VectorMath.dot(w, i * cols, x, xo, cols);
            }
        }
    }

    private static float sum(FloatVector v) {
        return v.reduceLanes(VectorOperators.ADD);
    }

    private static float tail(float[] w, int wOff, float[] x, int xOff, int k, int cols) {
        float s = 0f;
        for (; k < cols; k++) {
            s += w[wOff + k] * x[xOff + k];
        }
        return s;
    }
}
