package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class ParallelTest {
    @Test
    void everyIndexRunsExactlyOnceWithAlignedSlices() {
        try (Parallel pool = new Parallel(3)) {
            for (int n : new int[] {1, 2, 3, 10, 97, 1000}) {
                for (int align : new int[] {1, 4, 16}) {
                    AtomicIntegerArray hits = new AtomicIntegerArray(n);
                    pool.forRange(n, align, (start, end) -> {
                        assertTrue(start % align == 0, "slice start aligned");
                        for (int i = start; i < end; i++) {
                            hits.incrementAndGet(i);
                        }
                    });
                    for (int i = 0; i < n; i++) {
                        assertEquals(1, hits.get(i), "n=" + n + " align=" + align + " index " + i);
                    }
                }
            }
        }
    }

    @Test
    void aFailureInAWorkerReachesTheCallerAndThePoolStaysUsable() {
        try (Parallel pool = new Parallel(2)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.forRange(100, (s, end) -> {
                if (s > 0) {
                    throw new IllegalStateException("boom");
                }
            }));
            assertEquals("boom", e.getMessage());
            AtomicIntegerArray hits = new AtomicIntegerArray(1);
            pool.forRange(100, (s, end) -> hits.addAndGet(0, end - s));
            assertEquals(100, hits.get(0));
        }
    }

    @Test
    void physicalCoresIsPositive() {
        assertTrue(Parallel.physicalCores() >= 1);
    }
}
