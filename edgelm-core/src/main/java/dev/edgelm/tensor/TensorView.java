package dev.edgelm.tensor;

import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A named, typed, shaped view of stored tensor bytes (row-major, little-endian), as a format reader
 * found it. {@code source} names the file for error messages. Conversions to the model's forms
 * (a {@link WeightMatrix} or a small float array) check the type and report unsupported ones by name.
 */
public record TensorView(String name, String dtype, long[] shape, MemorySegment data, String source) {

    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    public String shapeString() {
        return Arrays.toString(shape);
    }

    /** The matrix view [shape[0], product of the rest]: no copy. */
    public WeightMatrix asMatrix() {
        if (shape.length < 2) {
            throw new EdgeLmException(source + ": tensor " + name + " has shape " + shapeString() + ", expected a matrix");
        }
        long rows = shape[0];
        long cols = elementCount() / Math.max(1, rows);
        if (rows > Integer.MAX_VALUE || cols > Integer.MAX_VALUE) {
            throw new EdgeLmException(source + ": tensor " + name + " is too large: " + shapeString());
        }
        return switch (dtype) {
            case "F32" -> new F32Matrix(data, (int) rows, (int) cols);
            case "BF16" -> new BF16Matrix(data, (int) rows, (int) cols);
            case "F16" -> new F16Matrix(data, (int) rows, (int) cols);
            default -> throw unsupported();
        };
    }

    /** All elements widened to float32 (for small tensors: norms, biases, conv kernels). */
    public float[] toFloatArray() {
        long n = elementCount();
        if (n > Integer.MAX_VALUE) {
            throw new EdgeLmException(source + ": tensor " + name + " is too large to copy: " + shapeString());
        }
        float[] out = new float[(int) n];
        switch (dtype) {
            case "F32" -> MemorySegment.copy(data, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, out, 0, out.length);
            case "BF16", "F16" -> {
                ValueLayout.OfShort s = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
                boolean bf = dtype.equals("BF16");
                for (int i = 0; i < out.length; i++) {
                    short bits = data.get(s, 2L * i);
                    out[i] = bf ? BF16Matrix.toFloat(bits) : Float.float16ToFloat(bits);
                }
            }
            default -> throw unsupported();
        }
        return out;
    }

    private EdgeLmException unsupported() {
        return new EdgeLmException(source + ": tensor " + name + " has dtype " + dtype
                + ", which EdgeLM cannot compute with (supported: F32, BF16, F16)");
    }
}
