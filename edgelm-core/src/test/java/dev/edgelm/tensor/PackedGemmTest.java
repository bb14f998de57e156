package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The vision GEMM against float64 dot products of the same (F16-rounded) weights, at sizes that leave partial row
 * tiles (rows not a multiple of 6), partial panels and odd widths; and, bit for bit, against {@link WeightMatrix#matmul}
 * on the rows its 8-row tiles cover (the same FMA chain per output).
 */
class PackedGemmTest {
    private static final ValueLayout.OfShort LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static float[] gaussian(int n, SplittableRandom rnd) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rnd.nextGaussian();
        }
        return a;
    }

    /** Little-endian F16 weights, rows x cols of them, from the generator. */
    private static MemorySegment randomF16(int rows, int cols, SplittableRandom rnd) {
        MemorySegment seg = MemorySegment.ofArray(new byte[2 * rows * cols]);
        for (long i = 0; i < (long) rows * cols; i++) {
            seg.set(LE, 2 * i, Float.floatToFloat16((float) rnd.nextGaussian()));
        }
        return seg;
    }

    @ParameterizedTest
    @CsvSource({"13,37,70,2", "6,16,8,1", "64,100,33,2", "1,9,5,2", "23,8,16,2", "50,3,40,2", "100,256,96,2", "37,12,300,1"})
    void matchesTheDefinition(int rows, int tokens, int cols, int threads) {
        SplittableRandom rnd = new SplittableRandom(rows * 1009L + tokens * 31L + cols);
        MemorySegment seg = randomF16(rows, cols, rnd);
        WeightMatrix w = new F16Matrix(seg, rows, cols);
        float[] x = gaussian(tokens * cols, rnd);
        int stride = rows + 3;
        float[] out = new float[tokens * stride];
        float[] plain = new float[tokens * stride];
        try (Parallel pool = new Parallel(threads)) {
            PackedGemm.matmul(pool, w, new Activations().set(x, tokens, cols), out, stride, 2);
            // the 8-row panel kernel (the text path before, and with 16-lane vectors), for chunks it takes
            if (tokens >= FloatGemm.PANEL / 2) {
                w.matmulPanels(pool, new Activations().set(x, tokens, cols), plain, stride, 2);
            } else {
                w.matmul(pool, new Activations().set(x, tokens, cols), plain, stride, 2);
            }
            // and the text path: WeightMatrix.matmul (this kernel itself on 8-lane machines)
            float[] viaMatmul = new float[tokens * stride];
            w.matmul(pool, new Activations().set(x, tokens, cols), viaMatmul, stride, 2);
            assertArrayEquals(out, viaMatmul);
        }
        double worst = 0;
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < rows; r++) {
                double dot = 0;
                for (int k = 0; k < cols; k++) {
                    dot += (double) Float.float16ToFloat(seg.get(LE, 2L * (r * cols + k))) * x[t * cols + k];
                }
                worst = Math.max(worst, Math.abs(dot - out[t * stride + 2 + r]) / Math.sqrt(cols));
            }
            // the columns outside [2, 2 + rows) of each output row stay untouched
            assertTrue(out[t * stride] == 0f && out[t * stride + 1] == 0f && out[t * stride + 2 + rows] == 0f);
        }
        assertTrue(worst < 1e-5, "max scaled abs diff " + worst);
        // rows in whole 8-row tiles of the old kernel went through the same FMA chain (its remainder rows are dot products)
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < rows / 8 * 8; r++) {
                assertEquals(plain[t * stride + 2 + r], out[t * stride + 2 + r], 0f, "token " + t + ", row " + r);
            }
        }
    }

    /**
     * The 12-row panel tile (16-lane vectors) against the 8-row one and the definition. The pool hands each thread
     * chunks of whole 8-row tiles (up to 8 chunks per thread), so only chunks of 24 rows or more reach the 12-row
     * tile: one thread's 24, 36, 48 and 100 rows, two threads' 416 (chunks of 24-32 rows: 12-row tiles, an 8-row
     * tile padded to 12, remainder rows); the small cases check that the 8-row path is untouched. Each result is one
     * FMA chain over the columns in both, so the rows of whole 8-row tiles have the same bits.
     */
    @ParameterizedTest
    @CsvSource({"8,40,70,1", "12,33,64,1", "20,64,48,2", "24,16,100,2", "36,100,33,1", "44,70,40,2", "101,35,24,2",
            "200,64,32,2", "24,33,64,1", "48,70,40,1", "100,37,24,1", "416,40,32,2"})
    void wideTileGivesTheBitsOfTheEightRowTile(int rows, int tokens, int cols, int threads) {
        SplittableRandom rnd = new SplittableRandom(rows * 7919L + tokens * 131L + cols);
        MemorySegment seg = randomF16(rows, cols, rnd);
        WeightMatrix w = new F16Matrix(seg, rows, cols);
        float[] x = gaussian(tokens * cols, rnd);
        int stride = rows + 3;
        float[] wide = new float[tokens * stride];
        float[] narrow = new float[tokens * stride];
        try (Parallel pool = new Parallel(threads)) {
            w.matmulPanels(pool, new Activations().set(x, tokens, cols), wide, stride, 2, true);
            w.matmulPanels(pool, new Activations().set(x, tokens, cols), narrow, stride, 2, false);
        }
        double worst = 0;
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < rows; r++) {
                double dot = 0;
                for (int k = 0; k < cols; k++) {
                    dot += (double) Float.float16ToFloat(seg.get(LE, 2L * (r * cols + k))) * x[t * cols + k];
                }
                worst = Math.max(worst, Math.abs(dot - wide[t * stride + 2 + r]) / Math.sqrt(cols));
            }
            assertTrue(wide[t * stride] == 0f && wide[t * stride + 1] == 0f && wide[t * stride + 2 + rows] == 0f);
            for (int r = 0; r < rows / 8 * 8; r++) {
                assertEquals(narrow[t * stride + 2 + r], wide[t * stride + 2 + r], 0f, "token " + t + ", row " + r);
            }
        }
        assertTrue(worst < 1e-5, "max scaled abs diff " + worst);
    }

    /**
     * Many tokens of long rows go in groups of decoded rows and blocks of panels (shrunk here to 2 panels and 12
     * rows): the same bits as the one-tile-at-a-time loop, and the definition.
     */
    @ParameterizedTest
    @CsvSource({"13,37,70,2", "64,100,33,2", "50,40,40,1", "31,70,19,2"})
    void blockedLoopGivesTheSameBits(int rows, int tokens, int cols, int threads) {
        // at any vector width: the text path's kernel on 8 lanes, the vision tower's long rows on wider ones
        SplittableRandom rnd = new SplittableRandom(rows * 7L + tokens * 13L + cols);
        float[] wf = gaussian(rows * cols, rnd);
        WeightMatrix w = new F32Matrix(MemorySegment.ofArray(wf), rows, cols);
        float[] x = gaussian(tokens * cols, rnd);
        int stride = rows + 1;
        float[] plain = new float[tokens * stride];
        float[] blocked = new float[tokens * stride];
        int above = PackedGemm.blockAboveFloats, panel = PackedGemm.panelBlockFloats, group = PackedGemm.groupFloats;
        try (Parallel pool = new Parallel(threads)) {
            PackedGemm.blockAboveFloats = Integer.MAX_VALUE;
            PackedGemm.multiply(w, pool, new Activations().set(x, tokens, cols), plain, stride, 1);
            PackedGemm.blockAboveFloats = 0;
            PackedGemm.panelBlockFloats = 2 * FloatGemm.PANEL * cols;
            PackedGemm.groupFloats = 12 * cols;
            PackedGemm.multiply(w, pool, new Activations().set(x, tokens, cols), blocked, stride, 1);
        } finally {
            PackedGemm.blockAboveFloats = above;
            PackedGemm.panelBlockFloats = panel;
            PackedGemm.groupFloats = group;
        }
        assertArrayEquals(plain, blocked);
        double worst = 0;
        for (int t = 0; t < tokens; t++) {
            assertEquals(0f, blocked[t * stride]);
            for (int r = 0; r < rows; r++) {
                double dot = 0;
                for (int k = 0; k < cols; k++) {
                    dot += (double) wf[r * cols + k] * x[t * cols + k];
                }
                worst = Math.max(worst, Math.abs(dot - blocked[t * stride + 1 + r]) / Math.sqrt(cols));
            }
        }
        assertTrue(worst < 1e-5, "max scaled abs diff " + worst);
    }

    /**
     * Through the vision entry, activations past {@link PackedGemm#blockAboveFloats} of rows of at least {@link
     * PackedGemm#longRows} values (both shrunk here to nothing) take
     * the 6-row tile with its panel blocks at every vector width: the definition, the bits of {@link
     * PackedGemm#multiply} itself, and on the rows of whole 8-row tiles the bits of the 8-row kernel.
     */
    @ParameterizedTest
    @CsvSource({"13,37,70,2", "64,100,33,2", "24,40,40,1", "31,70,19,2"})
    void longRowsTakeTheBlockedTile(int rows, int tokens, int cols, int threads) {
        SplittableRandom rnd = new SplittableRandom(rows * 5L + tokens * 17L + cols);
        float[] wf = gaussian(rows * cols, rnd);
        WeightMatrix w = new F32Matrix(MemorySegment.ofArray(wf), rows, cols);
        float[] x = gaussian(tokens * cols, rnd);
        int stride = rows + 2;
        float[] viaEntry = new float[tokens * stride];
        float[] tile = new float[tokens * stride];
        float[] panels = new float[tokens * stride];
        int above = PackedGemm.blockAboveFloats, panel = PackedGemm.panelBlockFloats, group = PackedGemm.groupFloats;
        int longRows = PackedGemm.longRows;
        try (Parallel pool = new Parallel(threads)) {
            PackedGemm.blockAboveFloats = 0;
            PackedGemm.longRows = 0;
            PackedGemm.panelBlockFloats = 2 * FloatGemm.PANEL * cols;
            PackedGemm.groupFloats = 12 * cols;
            PackedGemm.matmul(pool, w, new Activations().set(x, tokens, cols), viaEntry, stride, 1);
            PackedGemm.multiply(w, pool, new Activations().set(x, tokens, cols), tile, stride, 1);
            w.matmulPanels(pool, new Activations().set(x, tokens, cols), panels, stride, 1);
        } finally {
            PackedGemm.blockAboveFloats = above;
            PackedGemm.longRows = longRows;
            PackedGemm.panelBlockFloats = panel;
            PackedGemm.groupFloats = group;
        }
        assertArrayEquals(tile, viaEntry);
        double worst = 0;
        for (int t = 0; t < tokens; t++) {
            assertEquals(0f, viaEntry[t * stride]);
            assertEquals(0f, viaEntry[t * stride + 1 + rows]);
            for (int r = 0; r < rows; r++) {
                double dot = 0;
                for (int k = 0; k < cols; k++) {
                    dot += (double) wf[r * cols + k] * x[t * cols + k];
                }
                worst = Math.max(worst, Math.abs(dot - viaEntry[t * stride + 1 + r]) / Math.sqrt(cols));
            }
            for (int r = 0; r < rows / 8 * 8; r++) {
                assertEquals(panels[t * stride + 1 + r], viaEntry[t * stride + 1 + r], 0f, "token " + t + ", row " + r);
            }
        }
        assertTrue(worst < 1e-5, "max scaled abs diff " + worst);
    }
}
