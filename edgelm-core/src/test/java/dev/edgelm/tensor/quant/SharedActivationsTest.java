package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Matrices multiplied by one {@link Activations} share its packed panels and int8 rounding: every result
 * must equal, bit for bit, the same matrix multiplied on its own, whatever the order in which the matrices
 * (float-panel and int8 kernels mixed) ask for the packed forms, and a {@link Activations#set} must never
 * leave the previous input's panels behind.
 */
class SharedActivationsTest {
    private static final int COLS = 256;

    @Test
    void sharedInputGivesTheResultsOfSeparateCalls() {
        Random r = new Random(11);
        WeightMatrix q4 = q4_0(r, 37);
        WeightMatrix q8 = q8_0(r, 29);
        WeightMatrix q4b = q4_0(r, 8);
        WeightMatrix[][] orders = {{q4, q8, q4b}, {q8, q4, q4b}, {q8, q8, q4}};
        try (Parallel pool = new Parallel(2)) {
            Activations shared = new Activations();
            for (int n : new int[] {1, 5, 16, 40}) {
                for (WeightMatrix[] order : orders) {
                    float[] x = random(r, n * COLS);
                    shared.set(x, n, COLS);
                    for (WeightMatrix m : order) {
                        float[] alone = new float[n * m.rows()];
                        m.matmul(pool, x.clone(), n, alone);
                        float[] together = new float[n * m.rows()];
                        m.matmul(pool, shared, together);
                        assertArrayEquals(alone, together, 0f, m + ", " + n + " tokens");
                    }
                }
            }
        }
    }

    @Test
    void setDropsThePreviousInputsPanels() {
        Random r = new Random(12);
        WeightMatrix q4 = q4_0(r, 24);
        WeightMatrix q8 = q8_0(r, 24);
        try (Parallel pool = new Parallel(2)) {
            Activations shared = new Activations();
            int n = 33;
            float[] first = random(r, n * COLS);
            float[] second = random(r, n * COLS);
            for (WeightMatrix m : new WeightMatrix[] {q4, q8}) {
                m.matmul(pool, shared.set(first, n, COLS), new float[n * m.rows()]);
                float[] got = new float[n * m.rows()];
                m.matmul(pool, shared.set(second, n, COLS), got);
                float[] expected = new float[n * m.rows()];
                m.matmul(pool, second, n, expected);
                assertArrayEquals(expected, got, 0f, m.toString());
            }
        }
    }

    @Test
    void aMatrixRefusesAnInputOfAnotherWidth() {
        Random r = new Random(13);
        WeightMatrix q8 = q8_0(r, 4);
        try (Parallel pool = new Parallel(1)) {
            Activations wrong = new Activations().set(new float[2 * 128], 2, 128);
            assertThrows(IllegalArgumentException.class, () -> q8.matmul(pool, wrong, new float[8]));
        }
    }

    private static WeightMatrix q4_0(Random r, int rows) {
        MemorySegment w = Arena.ofAuto().allocate(GgmlType.Q4_0.byteSize(COLS) * rows);
        Q4_0Matrix.quantize(random(r, rows * COLS), 0, rows * COLS, w, 0);
        return new Q4_0Matrix(w, rows, COLS);
    }

    private static WeightMatrix q8_0(Random r, int rows) {
        MemorySegment w = Arena.ofAuto().allocate(GgmlType.Q8_0.byteSize(COLS) * rows);
        Q8_0Matrix.quantize(random(r, rows * COLS), 0, rows * COLS, w, 0);
        return new Q8_0Matrix(w, rows, COLS);
    }

    private static float[] random(Random r, int size) {
        float[] a = new float[size];
        for (int i = 0; i < size; i++) {
            a[i] = (float) r.nextGaussian();
        }
        return a;
    }
}
