package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The 6 x 2-vector register tile (12 accumulators, 15 vector registers: no spill with AVX2's 16) of
 * {@link PackedGemm#tile} (decoded rows back to back into a scratch tile) and of the vision attention (rows at any
 * stride, results straight to their destination), whole vectors at a time: {@code out[outOff + i * outStride + j] = sum over k < depth of w[wOff + i * wStride + k] *
 * xt[xtOff + k * P + j]} for {@code i < 6}, {@code j < P} ({@code P} = {@link FloatGemm#PANEL}): each result one
 * FMA chain over k in order.
 */
final class RegisterTile {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    private static final int P = FloatGemm.PANEL;
    /** Broadcast rows per tile. */
    static final int MR = 6;

    private RegisterTile() {}

    static void multiply(float[] w, int wOff, int wStride, int depth, float[] xt, int xtOff, float[] out, int outOff,
                         int outStride) {
        FloatVector a00 = FloatVector.zero(F), a01 = FloatVector.zero(F);
        FloatVector a10 = FloatVector.zero(F), a11 = FloatVector.zero(F);
        FloatVector a20 = FloatVector.zero(F), a21 = FloatVector.zero(F);
        FloatVector a30 = FloatVector.zero(F), a31 = FloatVector.zero(F);
        FloatVector a40 = FloatVector.zero(F), a41 = FloatVector.zero(F);
        FloatVector a50 = FloatVector.zero(F), a51 = FloatVector.zero(F);
        int c0 = wOff, c1 = c0 + wStride, c2 = c1 + wStride, c3 = c2 + wStride, c4 = c3 + wStride, c5 = c4 + wStride;
        for (int k = 0; k < depth; k++) {
            int xo = xtOff + k * P;
            FloatVector x0 = FloatVector.fromArray(F, xt, xo);
            FloatVector x1 = FloatVector.fromArray(F, xt, xo + L);
            FloatVector b;
            b = FloatVector.broadcast(F, w[c0 + k]);
            a00 = b.fma(x0, a00);
            a01 = b.fma(x1, a01);
            b = FloatVector.broadcast(F, w[c1 + k]);
            a10 = b.fma(x0, a10);
            a11 = b.fma(x1, a11);
            b = FloatVector.broadcast(F, w[c2 + k]);
            a20 = b.fma(x0, a20);
            a21 = b.fma(x1, a21);
            b = FloatVector.broadcast(F, w[c3 + k]);
            a30 = b.fma(x0, a30);
            a31 = b.fma(x1, a31);
            b = FloatVector.broadcast(F, w[c4 + k]);
            a40 = b.fma(x0, a40);
            a41 = b.fma(x1, a41);
            b = FloatVector.broadcast(F, w[c5 + k]);
            a50 = b.fma(x0, a50);
            a51 = b.fma(x1, a51);
        }
        int o = outOff;
        a00.intoArray(out, o);
        a01.intoArray(out, o + L);
        o += outStride;
        a10.intoArray(out, o);
        a11.intoArray(out, o + L);
        o += outStride;
        a20.intoArray(out, o);
        a21.intoArray(out, o + L);
        o += outStride;
        a30.intoArray(out, o);
        a31.intoArray(out, o + L);
        o += outStride;
        a40.intoArray(out, o);
        a41.intoArray(out, o + L);
        o += outStride;
        a50.intoArray(out, o);
        a51.intoArray(out, o + L);
    }
}
