package dev.edgelm.vision;

/** The two GELUs of the vision tower, in float32 results from double arithmetic. */
final class Gelu {
    private Gelu() {}

    private static final double SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

    /** PyTorch's {@code gelu(x, approximate="tanh")}. */
    static float tanh(float x) {
        return (float) (0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))));
    }

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
