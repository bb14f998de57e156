package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The int8 panels rounded straight from the rows ({@code -Dedgelm.int8.fused=true}) are those rounded from packed float panels, bit for bit. */
class ActivationsRoundingTest {
    @Test
    void roundingFromRowsMatchesRoundingFromPanels() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int cols : new int[] {32, 96, 256}) {
                    for (int n : new int[] {1, 16, 37, 64, 70}) {
                        float[] x = new float[n * cols];
                        for (int i = 0; i < x.length; i++) {
                            // zeros (a zero block), ties at x.5 of the scale, and a wide range
                            x[i] = i % 97 < 32 && n > 16 && i / cols == 3 ? 0f : (float) (rnd.nextGaussian() * (1 + i % 7));
                        }
                        Activations fused = new Activations().set(x, n, cols);
                        Activations packed = new Activations().set(x, n, cols);
                        packed.panels(pool); // packed first: rounded from the float panels
                        int size = fused.panelCount() * FloatGemm.PANEL * cols;
                        int scales = fused.panelCount() * FloatGemm.PANEL * (cols / Activations.BLOCK);
                        short[] a = Arrays.copyOf(fused.int8Panels(pool, true), size);
                        short[] b = Arrays.copyOf(packed.int8Panels(pool, true), size);
                        String where = threads + " threads, " + n + " x " + cols;
                        assertArrayEquals(b, a, where);
                        assertArrayEquals(Arrays.copyOf(packed.int8Scales(), scales), Arrays.copyOf(fused.int8Scales(), scales), where);
                        assertArrayEquals(Arrays.copyOf(packed.int8Sums(), scales), Arrays.copyOf(fused.int8Sums(), scales), where);
                        // and the float panels are still there for a float kernel after the fused rounding
                        assertArrayEquals(Arrays.copyOf(packed.panels(pool), size), Arrays.copyOf(fused.panels(pool), size), where);
                    }
                }
            }
        }
    }
}
