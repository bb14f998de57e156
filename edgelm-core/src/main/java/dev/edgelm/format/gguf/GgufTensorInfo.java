package dev.edgelm.format.gguf;

import dev.edgelm.tensor.GgmlType;
import java.util.Arrays;

/**
 * A tensor's entry in a GGUF header. {@code dims} are in ggml order, innermost first: {@code dims[0]} is
 * the row length, so dims {@code [cols, rows]} describe a row-major {@code [rows, cols]} matrix.
 * {@code offset} is relative to the start of the data section.
 */
public record GgufTensorInfo(String name, long[] dims, GgmlType type, long offset) {

    public GgufTensorInfo {
        dims = dims.clone();
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    public int nDims() {
        return dims.length;
    }

    public long dim(int i) {
        return dims[i];
    }

    public long elementCount() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }

    public long byteSize() {
        return type.byteSize(elementCount());
    }

    /** Row length: ggml's {@code ne[0]}. */
    public long rowLength() {
        return dims[0];
    }

    /** Number of rows: the product of every dim but the first. */
    public long rowCount() {
        return elementCount() / Math.max(1, dims[0]);
    }

    /** The row-major shape, outermost first (e.g. {@code [rows, cols]}). */
    public long[] rowMajorShape() {
        long[] s = new long[dims.length];
        for (int i = 0; i < dims.length; i++) {
            s[i] = dims[dims.length - 1 - i];
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && name.equals(t.name) && Arrays.equals(dims, t.dims)
                && type == t.type && offset == t.offset;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(dims);
    }

    @Override
    public String toString() {
        return name + " " + type + " " + Arrays.toString(dims) + " @" + offset;
    }
}
