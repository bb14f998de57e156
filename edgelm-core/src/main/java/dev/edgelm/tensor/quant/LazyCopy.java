package dev.edgelm.tensor.quant;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A matrix's working copy of its weights in a kernel's own layout ({@link Q4Lanes}, {@link Q6_KLanes}), made once, on
 * first use or when the loader asks ({@link WorkingCopy#makeCopy}). Where the source bytes belong to a loaded model
 * ({@link #releaseFileAfterCopy}) their pages are given back slab by slab as they are copied ({@link #inSlabs}); a read
 * of the source that starts before the copy exists ({@link #readFile}) holds the read lock, the copy the write lock, so
 * no read sees a released page.
 */
final class LazyCopy<T> {
    /** Makes the copy on {@code pool}'s threads (this one if null), releasing the source's pages when given {@code released}. */
    interface Maker<T> {
        T make(Parallel pool, long[] released);
    }

    /** Source bytes repacked between two releases: the most the file and the copy hold of one tensor at once. */
    static final long SLAB = 16L << 20;

    private final Maker<T> maker;
    private volatile T copy;
    private volatile boolean releaseFile;
    private volatile long released;
    private final ReentrantReadWriteLock file = new ReentrantReadWriteLock();

    LazyCopy(Maker<T> maker) {
        this.maker = maker;
    }

    /**
     * The copy, made now if not yet: on {@code pool}'s threads, or on this one if {@code pool} is null or fusing (inside
     * a fused section the pool would only record the repack and run it beside the products that read the copy).
     */
    T get(Parallel pool) {
        T c = copy;
        if (c == null) {
            synchronized (this) {
                c = copy;
                if (c == null) {
                    Parallel on = pool != null && pool.fusing() ? null : pool;
                    if (releaseFile) {
                        file.writeLock().lock();
                        try {
                            long[] freed = new long[1];
                            copy = c = maker.make(on, freed);
                            released = freed[0];
                        } finally {
                            file.writeLock().unlock();
                        }
                    } else {
                        copy = c = maker.make(on, null);
                    }
                }
            }
        }
        return c;
    }

    /** The copy if made, else null. */
    T copy() {
        return copy;
    }

    /**
     * Marks the source bytes as a loaded model's, read by nobody but this matrix: the copy then releases their pages.
     * Not for bytes that something else reads (a test's buffer, a converter's input).
     */
    void releaseFileAfterCopy() {
        releaseFile = true;
    }

    /** Bytes of the source released by the copy (0 before, or where not asked). */
    long releasedBytes() {
        return released;
    }

    /**
     * Runs {@code fileRead} (a read of the source bytes) unless the copy exists: returns the copy then (the caller
     * reads it instead), else null after the read, which holds the read lock where the source is to be released.
     */
    T readFile(Runnable fileRead) {
        T c = copy;
        if (c != null) {
            return c;
        }
        if (!releaseFile) {
            fileRead.run();
            return null;
        }
        file.readLock().lock();
        try {
            c = copy;
            if (c == null) {
                fileRead.run();
            }
            return c;
        } finally {
            file.readLock().unlock();
        }
    }

    /**
     * Runs {@code repack} over rows {@code [0, rows)} of {@code src} ({@code cols} values a row, its rows back to back),
     * {@link #SLAB} source bytes at a time, each slab on {@code pool}'s threads (or this one if null); with
     * {@code released} non-null each slab's pages are given back once repacked ({@link ModelMemory#release}) and the bytes
     * added to {@code released[0]}.
     */
    static void inSlabs(MemorySegment src, int rows, int cols, Parallel pool, long[] released, Parallel.RangeTask repack) {
        long srcRow = src.byteSize() / Math.max(1, rows);
        int slabRows = (int) Math.max(1, Math.min(rows, SLAB / Math.max(1, srcRow)));
        long from = 0;
        for (int r0 = 0; r0 < rows; r0 += slabRows) {
            int r1 = Math.min(rows, r0 + slabRows);
            if (pool == null) {
                repack.run(r0, r1);
            } else {
                int base = r0;
                pool.forRange(r1 - r0, 1, (long) (r1 - r0) * cols, (a, b) -> repack.run(base + a, base + b));
            }
            if (released != null) {
                long to = r1 == rows ? src.byteSize() : r1 * srcRow;
                released[0] += ModelMemory.release(src, from, to);
                from = ModelMemory.pageStart(src, to);
            }
        }
    }
}
