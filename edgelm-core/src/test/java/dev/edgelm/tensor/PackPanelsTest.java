package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The activation panels against their definition ({@code xt[p * PANEL * cols + k * PANEL + j] = x[(p * PANEL + j) *
 * cols + k]}, zeros past the last token): whole panels and widths that are multiples of 16 (the register transpose
 * on 16-lane vectors), a last partial panel, widths that are not, a range of panels that does not start at 0.
 */
class PackPanelsTest {

    @ParameterizedTest
    @CsvSource({"64,32,0", "70,48,0", "33,20,0", "32,16,0", "100,768,0", "96,64,1", "17,16,0", "128,4096,2"})
    void matchesTheDefinition(int n, int cols, int firstPanel) {
        int panels = (n + FloatGemm.PANEL - 1) / FloatGemm.PANEL;
        SplittableRandom r = new SplittableRandom(n * 31L + cols);
        float[] x = new float[n * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian();
        }
        float[] xt = new float[panels * FloatGemm.PANEL * cols];
        java.util.Arrays.fill(xt, Float.NaN); // every packed value is written, padding included
        FloatGemm.packPanels(x, n, cols, xt, firstPanel, panels);
        for (int p = firstPanel; p < panels; p++) {
            for (int k = 0; k < cols; k++) {
                for (int j = 0; j < FloatGemm.PANEL; j++) {
                    int t = p * FloatGemm.PANEL + j;
                    float want = t < n ? x[t * cols + k] : 0f;
                    assertEquals(want, xt[p * FloatGemm.PANEL * cols + k * FloatGemm.PANEL + j], 0f,
                            "panel " + p + ", column " + k + ", token " + j);
                }
            }
        }
        for (int i = 0; i < firstPanel * FloatGemm.PANEL * cols; i++) {
            assertEquals(Float.NaN, xt[i], 0f, "panels before the range stay untouched");
        }
    }
}
