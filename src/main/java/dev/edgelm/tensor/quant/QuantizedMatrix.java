package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;

/**
 * A matrix stored in one of ggml's block formats: each row is {@code cols / blockSize} blocks of
 * {@code typeSize} bytes, read in place from the segment (never dequantised as a whole).
 */
public abstract class QuantizedMatrix extends WeightMatrix {
    protected final GgmlType type;
    protected final long rowBytes;
    protected final int blocksPerRow;

    protected QuantizedMatrix(GgmlType type, MemorySegment data, int rows, int cols) {
        super(data, rows, cols);
        checkShape(type, data, rows, cols, type + " matrix");
        this.type = type;
        this.rowBytes = type.byteSize(cols);
        this.blocksPerRow = cols / type.blockSize();
    }

    public final GgmlType type() {
        return type;
    }

    @Override
    public final String typeName() {
        return type.name();
    }

    /**
     * Checks that a {@code [rows, cols]} matrix of {@code type} fits {@code data} exactly: rows whole
     * blocks long and {@code rows * rowBytes} bytes in all. {@code what} names the matrix in the message.
     */
    static void checkShape(GgmlType type, MemorySegment data, long rows, long cols, String what) {
        if (rows < 0 || cols <= 0 || cols % type.blockSize() != 0) {
            throw new EdgeLmException(what + " has " + cols + " columns, but " + type
                    + " stores values in blocks of " + type.blockSize() + " (a row must be a positive multiple of it)");
        }
        long expected = rows * type.byteSize(cols);
        if (data.byteSize() != expected) {
            throw new EdgeLmException(what + " [" + rows + ", " + cols + "] of type " + type + " needs " + expected
                    + " bytes, found " + data.byteSize());
        }
    }
}
