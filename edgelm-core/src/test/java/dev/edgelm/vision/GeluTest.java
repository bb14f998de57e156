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
}
