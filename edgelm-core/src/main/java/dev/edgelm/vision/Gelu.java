package dev.edgelm.vision;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** The two GELUs of the vision tower: scalar references in double, and the blocks' tanh form vectorised in float. */
final class Gelu {
    private Gelu() {}

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** 2 sqrt(2/pi) and 2 sqrt(2/pi) 0.044715: {@code 2u = x (C1 + C3 x^2)}. */
    private static final float C1 = (float) (2 * Math.sqrt(2 / Math.PI));
    private static final float C3 = (float) (2 * Math.sqrt(2 / Math.PI) * 0.044715);

    /**
     * {@link #tanh} over {@code a[from, to)} in place, in float vectors, through {@code 0.5 x (1 + tanh u) = x /
     * (1 + exp(-2u))}: one vector exponential per 8 values instead of a scalar tanh in double per value (the scalar
     * loop took 12 % of a 0.8B encode). Overflow is harmless: exp to infinity gives -0 for very negative x, exp to
     * 0 gives x. The quotient form has no cancellation at negative x, where {@code 1 + tanh u} has; it stays within
     * a few float ulps of the double reference (GeluTest).
     */
    static void tanhInPlace(float[] a, int from, int to) {
        int i = from;
        for (; i + F.length() <= to; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, a, i);
            FloatVector minus2u = x.mul(x).fma(-C3, -C1).mul(x);
            FloatVector e = minus2u.lanewise(VectorOperators.EXP);
            x.div(e.add(1f)).intoArray(a, i);
        }
        for (; i < to; i++) {
            float x = a[i];
            a[i] = x / (1f + (float) Math.exp(-x * (C1 + C3 * x * x)));
        }
    }

    private static final double SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

    /** PyTorch's {@code gelu(x, approximate="tanh")}. */
    static float tanh(float x) {
        return (float) (0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))));
    }

    /**
     * {@link #exact} over {@code a[from, to)} in place, through {@code x/2 * erfc(-x / sqrt 2)} with the Chebyshev
     * fit of erfc from Numerical Recipes (section 6.2: fractional error below 1.2e-7 everywhere, so within about two
     * float ulps of the exact GELU, and no cancellation at negative x): one exponential and nine multiply-adds in
     * double per value, against ~150 ns per value for the series of {@link #erf} (2 % of a 0.8B encode in the
     * merger).
     */
    static void exactInPlace(float[] a, int from, int to) {
        for (int i = from; i < to; i++) {
            double x = a[i];
            double z = -x * INV_SQRT_2;
            double t = 1 / (1 + 0.5 * Math.abs(z));
            double erfc = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
                    + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
                    + t * (-0.82215223 + t * 0.17087277)))))))));
            a[i] = (float) (0.5 * x * (z >= 0 ? erfc : 2 - erfc));
        }
    }

    private static final double INV_SQRT_2 = 1 / Math.sqrt(2);

    /** The exact {@code x * Phi(x) = x/2 * (1 + erf(x / sqrt 2))}. */
    static float exact(float x) {
        return (float) (0.5 * x * (1 + erf(x / Math.sqrt(2))));
    }

    /**
     * erf to ~1e-15 (the JDK has none): the Maclaurin series below |x| = 2.5, where its alternating terms stay
     * below 2^8 and lose only a few of double's digits; beyond it 1 - erfc by its continued fraction (Lentz).
     */
    static double erf(double x) {
        double a = Math.abs(x);
        double r;
        if (a < 2.5) {
            double term = a;
            double sum = a;
            double x2 = a * a;
            for (int n = 1; n < 60; n++) {
                term *= -x2 / n;
                double t = term / (2 * n + 1);
                sum += t;
                if (Math.abs(t) < 1e-17 * Math.abs(sum)) {
                    break;
                }
            }
            r = sum * 2 / Math.sqrt(Math.PI);
        } else if (a > 6) {
            r = 1;
        } else {
            r = 1 - erfcContinuedFraction(a);
        }
        return x < 0 ? -r : r;
    }

    /** erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))), for x >= 2.5. */
    private static double erfcContinuedFraction(double x) {
        // Evaluated bottom-up with a fixed depth: at x >= 2.5, 60 levels converge far below double precision.
        double f = x;
        for (int k = 60; k >= 1; k--) {
            f = x + (k / 2.0) / f;
        }
        return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
    }
}
