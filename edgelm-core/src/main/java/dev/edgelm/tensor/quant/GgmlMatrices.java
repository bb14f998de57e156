package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.BF16Matrix;
import dev.edgelm.tensor.F16Matrix;
import dev.edgelm.tensor.F32Matrix;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/** The {@link WeightMatrix} kernel for a ggml tensor type, over the tensor's stored bytes (no copy). */
public final class GgmlMatrices {
    /** The types {@link #create} accepts (the one place that decides it). */
    public static final Set<GgmlType> SUPPORTED = Set.copyOf(EnumSet.of(
            GgmlType.F32, GgmlType.F16, GgmlType.BF16,
            GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1,
            GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K));

    private GgmlMatrices() {}

    public static WeightMatrix create(GgmlType type, MemorySegment data, int rows, int cols) {
        return create(type, data, rows, cols, "a tensor");
    }

    /**
     * A {@code [rows, cols]} matrix of {@code type} over {@code data}, which must hold exactly
     * {@code rows * type.byteSize(cols)} bytes. {@code what} names the tensor in errors, e.g.
     * {@code "model.gguf: tensor output.weight"}.
     */
    public static WeightMatrix create(GgmlType type, MemorySegment data, int rows, int cols, String what) {
        if (!SUPPORTED.contains(type)) {
            throw new EdgeLmException(what + " has type " + type + ", which EdgeLM cannot compute with (supported: "
                    + String.join(", ", EnumSet.copyOf(SUPPORTED).stream().map(Enum::name).toList()) + ")");
        }
        QuantizedMatrix.checkShape(type, data, rows, cols, what);
        return switch (type) {
            case F32 -> new F32Matrix(data, rows, cols);
            case F16 -> new F16Matrix(data, rows, cols);
            case BF16 -> new BF16Matrix(data, rows, cols);
            case Q8_0 -> new Q8_0Matrix(data, rows, cols);
            case Q4_0 -> new Q4_0Matrix(data, rows, cols);
            case Q4_1 -> new Q4_1Matrix(data, rows, cols);
            case Q5_0 -> new Q5_0Matrix(data, rows, cols);
            case Q5_1 -> new Q5_1Matrix(data, rows, cols);
            case Q2_K -> new Q2_KMatrix(data, rows, cols);
            case Q3_K -> new Q3_KMatrix(data, rows, cols);
            case Q4_K -> new Q4_KMatrix(data, rows, cols);
            case Q5_K -> new Q5_KMatrix(data, rows, cols);
            case Q6_K -> new Q6_KMatrix(data, rows, cols);
            default -> throw new AssertionError(type);
        };
    }
}
