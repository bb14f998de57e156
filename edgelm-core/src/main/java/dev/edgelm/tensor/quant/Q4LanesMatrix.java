package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.MemorySegment;

/**
 * What Q4_0 and Q4_K share around their {@link Q4Lanes} decode: the copy's life cycle ({@link WorkingCopy}) and
 * {@code decodeRow}, which reads the copy once it exists and the file's bytes ({@link #decodeRowFile}) before.
 */
abstract sealed class Q4LanesMatrix extends QuantizedMatrix implements Int8Gemm.Int8Rows, WorkingCopy
        permits Q4_0Matrix, Q4_KMatrix {
    /** Whether this format decodes on the copy (its {@code INT_DECODE} switch). */
    private final boolean intDecodeOn;
    /** Integer decode on a repacked copy (with {@link #intDecodeOn}). */
    final Q4Lanes.Decode intDecode;

    Q4LanesMatrix(GgmlType type, Q4Lanes.Format format, boolean intDecodeOn, MemorySegment data, int rows, int cols,
            int sumRun) {
        super(type, data, rows, cols, sumRun);
        this.intDecodeOn = intDecodeOn;
        this.intDecode = new Q4Lanes.Decode(format, data, rows, cols);
    }

    @Override
    public void releaseFileAfterCopy() {
        if (intDecodeOn) {
            intDecode.copy.releaseFileAfterCopy();
        }
    }

    @Override
    public void makeCopy(Parallel pool) {
        if (intDecodeOn) {
            intDecode.lanes(pool);
        }
    }

    @Override
    public long releasedBytes() {
        return intDecode.copy.releasedBytes();
    }

    @Override
    public MemorySegment workingStorage() {
        Q4Lanes l = intDecode.copy.copy();
        return l != null ? l.packed.asReadOnly() : storage();
    }

    /** From the copy once it exists (the same values: {@link Q4Lanes#decodeRow}), else from the file. */
    @Override
    public void decodeRow(int row, float[] dst, int off) {
        Q4Lanes l = intDecode.copy.readFile(() -> decodeRowFile(row, dst, off));
        if (l != null) {
            l.decodeRow(row, dst, off);
        }
    }

    /** {@link #decodeRow} from the file's bytes. */
    abstract void decodeRowFile(int row, float[] dst, int off);
}
