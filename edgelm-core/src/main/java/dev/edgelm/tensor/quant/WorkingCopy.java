package dev.edgelm.tensor.quant;

/**
 * A matrix that makes a working copy of its weights in a layout of its own (on its first product). Where it then
 * reads only the copy, in every decoder (Q4_0, Q4_K, Q6_K), the loader of a model lets it give the file's pages of the
 * tensor back; where some decoder still reads the file (Q5_K: prefill), the copy is extra memory and
 * {@link #releaseFileAfterCopy} does nothing.
 */
public interface WorkingCopy {
    /**
     * Once the copy is made, release the pages of the source bytes ({@link dev.edgelm.format.ModelMemory#release}):
     * only for bytes that nothing but this matrix reads (a loaded model's tensor, one matrix per tensor). A no-op where
     * this matrix makes no copy (its integer decode switched off, or not on this machine's vectors).
     */
    void releaseFileAfterCopy();

    /**
     * Makes the copy now, on {@code pool}'s threads, if this matrix makes one and has none yet. A loader calls it
     * once per multiplied tensor right after loading: made lazily, the copies of the projections inside a fused
     * decode section are made on the calling thread alone during the first prompt (0.8B Q4_K_M: time to first
     * token 2.70 s against 0.83 s without copies).
     */
    void makeCopy(dev.edgelm.tensor.Parallel pool);

    /** Bytes of the source released so far (0 before the copy, or where not asked). */
    long releasedBytes();

    /**
     * The bytes this matrix's products read: the copy once made, else the source ({@code storage()}). Whoever streams
     * a matrix's memory (the benchmark's read loop) reads these: the source may have been released.
     */
    java.lang.foreign.MemorySegment workingStorage();
}
