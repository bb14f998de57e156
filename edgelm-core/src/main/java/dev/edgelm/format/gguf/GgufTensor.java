package dev.edgelm.format.gguf;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.tensor.quant.GgmlMatrices;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;

/** A tensor of a mapped GGUF file: its header entry and a view of its bytes. */
public record GgufTensor(GgufTensorInfo info, MemorySegment data, String source) {

    public String name() {
        return info.name();
    }

    public GgmlType type() {
        return info.type();
    }

    /** The matrix view [rows, ne[0]] over the stored bytes, no copy. */
    public WeightMatrix asMatrix() {
        long rows = info.rowCount();
        long cols = info.rowLength();
        if (rows > Integer.MAX_VALUE || cols > Integer.MAX_VALUE) {
            throw new EdgeLmException(source + ": tensor " + name() + " is too large: " + info);
        }
        return GgmlMatrices.create(type(), data, (int) rows, (int) cols, source + ": tensor " + name());
    }

    /** All elements as float32 (for the small float tensors: norms, biases, the conv kernel). */
    public float[] toFloatArray() {
        return switch (type()) {
            case F32, F16, BF16 -> new TensorView(name(), type().name(), info.rowMajorShape(), data, source).toFloatArray();
            default -> throw new EdgeLmException(source + ": tensor " + name() + " has type " + type()
                    + "; EdgeLM expects F32, F16 or BF16 for this small tensor");
        };
    }
}
