package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.F16Matrix;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * The prefill GEMMs' row split (the pool's cost-sized chunks, up to 64 per thread for a GEMM): every row exactly once
 * in tile-aligned ranges, and the same bits whatever the threads.
 */
class GemmRowSplitTest {
    @Test
    void coversEveryRowOnceInAlignedRanges() {
        for (int threads : new int[] {1, 2, 3}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {1, 7, 8, 9, 100, 1000, 4099}) {
                    for (int align : new int[] {1, 6, 8, 24}) {
                        AtomicIntegerArray seen = new AtomicIntegerArray(n);
                        pool.forRange(n, align, Long.MAX_VALUE, (s, e) -> {
                            assertEquals(0, s % align, "start " + s);
                            assertTrue(e == n || e % align == 0, "end " + e);
                            for (int i = s; i < e; i++) {
                                seen.incrementAndGet(i);
                            }
                        });
                        for (int i = 0; i < n; i++) {
                            assertEquals(1, seen.get(i), "threads " + threads + " n " + n + " align " + align + " row " + i);
                        }
                    }
                }
            }
        }
    }

    /** Rows of 1, 2 and 3 threads fall in different ranges; each output must not depend on which. */
    @Test
    void sameBitsForAnyThreads() {
        SplittableRandom rnd = new SplittableRandom(11);
        int rows = 300; // 38 tiles of 8, 25 of 12: ranges of one tile and a partial last one
        int cols = 256;
        int tokens = 45;
        float[] wf = new float[rows * cols];
        for (int i = 0; i < wf.length; i++) {
            wf[i] = (float) rnd.nextGaussian();
        }
        MemorySegment q4 = Arena.ofAuto().allocate(GgmlType.Q4_0.byteSize(cols) * rows);
        Q4_0Matrix.quantize(wf, 0, wf.length, q4, 0);
        MemorySegment f16 = Arena.ofAuto().allocate(2L * rows * cols);
        for (int i = 0; i < wf.length; i++) {
            f16.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16(wf[i]));
        }
        float[] x = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        for (WeightMatrix m : new WeightMatrix[] {new Q4_0Matrix(q4, rows, cols), new F16Matrix(f16, rows, cols)}) {
            float[] one = run(m, x, tokens, 1);
            for (int threads : new int[] {2, 3}) {
                assertArrayEquals(one, run(m, x, tokens, threads), m + ", " + threads + " threads");
            }
        }
    }

    private static float[] run(WeightMatrix m, float[] x, int tokens, int threads) {
        float[] out = new float[tokens * m.rows()];
        try (Parallel pool = new Parallel(threads)) {
            m.matmul(pool, new Activations().set(x, tokens, m.cols()), out, m.rows(), 0);
        }
        return out;
    }
}
