package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/** Float32 vector primitives over heap arrays, used by the model's non-matmul math. */
public final class VectorMath {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private static final int L = F.length();
    // lane i to lane i ^ k: the steps of sum's fixed reduction tree
    private static final VectorShuffle<Float> SWAP8 = L >= 16 ? VectorShuffle.fromOp(F, i -> i ^ 8) : null;
    private static final VectorShuffle<Float> SWAP4 = L >= 8 ? VectorShuffle.fromOp(F, i -> i ^ 4) : null;
    private static final VectorShuffle<Float> SWAP2 = L >= 4 ? VectorShuffle.fromOp(F, i -> i ^ 2) : null;
    private static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);

    private VectorMath() {}

    /**
     * The sum of a preferred-width vector's lanes in one fixed order (lane i ^ k added to lane i for k = L/2, ...,
     * 1), whether the code runs compiled or interpreted: {@code reduceLanes} sums in another order in the
     * interpreter than in C2's code, so a product computed once interpreted and once compiled (a one-token and a
     * batched call of the same kernel) would differ in the last bits. The block kernels keep their own copy
     * ({@code quant.Simd.sum}) for their own, possibly forced, width.
     */
    public static float sum(FloatVector v) {
        if (L > 16) {
            return v.reduceLanes(VectorOperators.ADD); // no preferred float shape is this wide on x86 or ARM
        }
        if (L >= 16) {
            v = v.add(v.rearrange(SWAP8));
        }
        if (L >= 8) {
            v = v.add(v.rearrange(SWAP4));
        }
        if (L >= 4) {
            v = v.add(v.rearrange(SWAP2));
        }
        return v.add(v.rearrange(SWAP1)).lane(0);
    }

    public static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        int i = 0;
        FloatVector acc = FloatVector.zero(F);
        int bound = F.loopBound(n);
        for (; i < bound; i += F.length()) {
            acc = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc);
        }
        float s = sum(acc);
        for (; i < n; i++) {
            s += a[aOff + i] * b[bOff + i];
        }
        return s;
    }

    public static float sumOfSquares(float[] a, int off, int n) {
        return dot(a, off, a, off, n);
    }

    /** {@code y[yOff..] += alpha * x[xOff..]} */
    public static void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        int bound = F.loopBound(n);
        FloatVector va = FloatVector.broadcast(F, alpha);
        for (; i < bound; i += F.length()) {
            FloatVector.fromArray(F, x, xOff + i).fma(va, FloatVector.fromArray(F, y, yOff + i))
                    .intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }

    /** {@code x[off..] *= s} */
    public static void scale(float[] x, int off, int n, float s) {
        int i = 0;
        int bound = F.loopBound(n);
        for (; i < bound; i += F.length()) {
            FloatVector.fromArray(F, x, off + i).mul(s).intoArray(x, off + i);
        }
        for (; i < n; i++) {
            x[off + i] *= s;
        }
    }

    /** {@code y[yOff..] += x[xOff..]} */
    public static void add(float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        int bound = F.loopBound(n);
        for (; i < bound; i += F.length()) {
            FloatVector.fromArray(F, y, yOff + i).add(FloatVector.fromArray(F, x, xOff + i)).intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += x[xOff + i];
        }
    }

    /**
     * {@code a[i] = silu(a[i]) * (b == null ? 1 : b[i])} over {@code [off, off+n)}. The vector exp (SVML on
     * x86) instead of a scalar {@code Math.exp} per element: the MLP and the conv take one per activation,
     * ~50 M per 256-token prefill of the 0.8B.
     */
    public static void siluInPlace(float[] a, float[] b, int off, int n) {
        int i = 0;
        int bound = F.loopBound(n);
        FloatVector one = FloatVector.broadcast(F, 1f);
        for (; i < bound; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, a, off + i);
            FloatVector y = x.div(x.neg().lanewise(VectorOperators.EXP).add(one));
            if (b != null) {
                y = y.mul(FloatVector.fromArray(F, b, off + i));
            }
            y.intoArray(a, off + i);
        }
        for (; i < n; i++) {
            a[off + i] = silu(a[off + i]) * (b == null ? 1f : b[off + i]);
        }
    }

    public static float silu(float x) {
        return x / (1f + (float) Math.exp(-x));
    }

    public static float sigmoid(float x) {
        return 1f / (1f + (float) Math.exp(-x));
    }

    /** softplus as PyTorch computes it: linear above 20 to avoid overflow. */
    public static float softplus(float x) {
        return x > 20f ? x : (float) Math.log1p(Math.exp(x));
    }
}
