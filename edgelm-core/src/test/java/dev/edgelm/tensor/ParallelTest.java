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
            for (int n : new int[] {1, 2, 3, 10, 17, 97, 1000, 100_003}) {
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

    /**
     * A worker stuck in its first chunk (here: until the caller has run part of the worker's slice) does not hold
     * the section: the caller takes over the chunks of that slice nobody has started. With one fixed slice per
     * thread the caller would wait for the worker and the latch would time out.
     */
    @Test
    void theCallerTakesOverTheSliceOfAWorkerThatIsLate() throws Exception {
        try (Parallel pool = new Parallel(2)) {
            int n = 1600;
            java.util.concurrent.CountDownLatch callerHelped = new java.util.concurrent.CountDownLatch(1);
            boolean[] timedOut = new boolean[1];
            Thread caller = Thread.currentThread();
            AtomicIntegerArray hits = new AtomicIntegerArray(n);
            pool.forRange(n, (start, end) -> {
                if (Thread.currentThread() == caller) {
                    if (start >= n / 2) {
                        callerHelped.countDown();
                    }
                } else {
                    try {
                        timedOut[0] |= !callerHelped.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                for (int i = start; i < end; i++) {
                    hits.incrementAndGet(i);
                }
            });
            for (int i = 0; i < n; i++) {
                assertEquals(1, hits.get(i), "index " + i);
            }
            assertEquals(0, callerHelped.getCount(), "the caller ran chunks of the worker's half");
            assertTrue(!timedOut[0], "the worker waited for the caller's help in vain");
        }
    }

    /**
     * Sections started inside {@link Parallel#fused} run only after its body, together: every index of every
     * part exactly once, each part's chunks aligned to its own alignment, whatever the sizes; a section below the
     * inline threshold runs at once.
     */
    @Test
    void fusedSectionsRunEveryIndexOnceAfterTheBody() {
        int[][] shapes = {{1}, {3, 5}, {97, 1, 1000}, {6144, 2048, 16, 16}, {100_003, 17}};
        int[] aligns = {1, 4, 16};
        for (int threads : new int[] {1, 2, 3}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int[] sizes : shapes) {
                    for (int align : aligns) {
                        AtomicIntegerArray[] hits = new AtomicIntegerArray[sizes.length];
                        boolean[] bodyDone = new boolean[1];
                        boolean[] ranEarly = new boolean[1];
                        AtomicIntegerArray inline = new AtomicIntegerArray(1);
                        pool.fused(() -> {
                            for (int p = 0; p < sizes.length; p++) {
                                int n = sizes[p];
                                AtomicIntegerArray h = hits[p] = new AtomicIntegerArray(n);
                                int a = p % 2 == 0 ? align : 1;
                                pool.forRange(n, a, (long) n << 16, (start, end) -> {
                                    ranEarly[0] |= threads > 1 && n > a && !bodyDone[0];
                                    assertTrue(start % a == 0, "part start aligned");
                                    for (int i = start; i < end; i++) {
                                        h.incrementAndGet(i);
                                    }
                                });
                            }
                            pool.forRange(10, 1, 10, (start, end) -> inline.addAndGet(0, end - start));
                            assertEquals(10, inline.get(0), "a cheap section runs at once");
                            bodyDone[0] = true;
                        });
                        assertTrue(!ranEarly[0], "a fused section ran before the body ended");
                        for (int p = 0; p < sizes.length; p++) {
                            for (int i = 0; i < sizes[p]; i++) {
                                assertEquals(1, hits[p].get(i), "threads=" + threads + " part " + p + " of "
                                        + java.util.Arrays.toString(sizes) + " align=" + align + " index " + i);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void aFailureInAFusedSectionReachesTheCaller() {
        try (Parallel pool = new Parallel(2)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.fused(() -> {
                pool.forRange(100, 1, 1L << 20, (s, end) -> { });
                pool.forRange(100, 1, 1L << 20, (s, end) -> {
                    throw new IllegalStateException("boom");
                });
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
