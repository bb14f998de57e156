package dev.edgelm.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * IEEE half-precision rows. Rare in Qwen3.5 checkpoints, so rows are widened with the JDK's exact scalar
 * conversion and then use the float32 vector dot.
 */
public final class F16Matrix extends WeightMatrix {
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private final ThreadLocal<float[]> scratch;

    public F16Matrix(MemorySegment data, int rows, int cols) {
        super(data, rows, cols);
        this.scratch = ThreadLocal.withInitial(() -> new float[cols]);
    }

    @Override
    public String typeName() {
        return "F16";
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = (long) row * cols * 2;
        for (int i = 0; i < cols; i++) {
            dst[off + i] = Float.float16ToFloat(data.get(LE_SHORT, base + 2L * i));
        }
    }

    @Override
    public float dotRow(int row, float[] x, int xOff) {
        float[] w = scratch.get();
        decodeRow(row, w, 0);
        return VectorMath.dot(w, 0, x, xOff, cols);
    }
}
