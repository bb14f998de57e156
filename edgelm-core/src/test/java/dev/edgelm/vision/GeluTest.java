package dev.edgelm.vision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The vectorised tanh-GELU against PyTorch's formula {@code 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))} in double. */
class GeluTest {

    private static double reference(double x) {
        return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
    }

    @Test
    void vectorisedTanhFormMatchesTheDoubleReference() {
        int n = 200_003; // odd: the scalar tail runs too
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = -15f + 30f * i / (n - 1);
        }
        float[] x = a.clone();
        Gelu.tanhInPlace(a, 0, n);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double ref = reference(x[i]);
            // error on the scale of the input (where the result is tiny, exp of a large argument in float is
            // off by a few 1e-6 relative, as in any float32 evaluation; absolute, that is below 1e-11)
            double err = Math.abs(a[i] - ref) / Math.max(Math.abs(x[i]), 1);
            worst = Math.max(worst, err);
        }
        assertTrue(worst < 3e-7, "worst error relative to max(|x|, 1) " + worst);
    }

    @Test
    void extremesAndSignedZeros() {
        float[] a = {0f, -0f, 100f, -100f, 1e-30f, -1e-30f, Float.MAX_VALUE, -Float.MAX_VALUE, 3f, -3f};
        Gelu.tanhInPlace(a, 0, a.length);
        assertEquals(0f, a[0]);
        assertEquals(0f, Math.abs(a[1]));
        assertEquals(100f, a[2]);
        assertEquals(0f, Math.abs(a[3]));
        assertEquals(0.5e-30f, a[4], 1e-36f);
        assertEquals(-0.5e-30f, a[5], 1e-36f);
        assertEquals(Float.MAX_VALUE, a[6]);
        assertEquals(0f, Math.abs(a[7]));
        assertEquals(reference(3), a[8], 1e-6);
        assertEquals(reference(-3), a[9], 1e-8);
    }

    /** The merger's exact GELU, x Phi(x), against the normal CDF's tabulated values and the series erf in double. */
    @Test
    void exactFormMatchesTheNormalCdf() {
        float[] x = {1f, -1f, 2f, -3f, 0f, 0.5f};
        // x * Phi(x): Phi(1) = 0.8413447460685429, Phi(2) = 0.9772498680518208, Phi(-3) = 0.0013498980316301,
        // Phi(0.5) = 0.6914624612740131
        double[] want = {0.8413447460685429, -0.1586552539314571, 1.9544997361036416, -0.0040496940948903, 0,
                0.34573123063700656};
        float[] a = x.clone();
        Gelu.exactInPlace(a, 0, a.length);
        for (int i = 0; i < a.length; i++) {
            assertEquals(want[i], a[i], 2e-7 * Math.abs(want[i]) + 1e-12, "x = " + x[i]);
        }
        int n = 100_001;
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
            b[i] = -12f + 24f * i / (n - 1);
        }
        float[] c = b.clone();
        Gelu.exactInPlace(c, 0, n);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double ref = Gelu.exact(b[i]);
            if (b[i] >= -5.5f) {
                worst = Math.max(worst, Math.abs(c[i] - ref) / Math.max(Math.abs(ref), 1e-30));
            } else {
                // below, the series reference's 1 + erf cancels in double (results under 1e-7 in size)
                assertEquals(ref, c[i], 1e-12, "x = " + b[i]);
            }
        }
        assertTrue(worst < 2.5e-7, "worst relative error " + worst);
    }
}
