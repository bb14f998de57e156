package dev.edgelm.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** Float32 rows, little-endian. */
public final class F32Matrix extends WeightMatrix {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public F32Matrix(MemorySegment data, int rows, int cols) {
        super(data, rows, cols);
    }

    @Override
    public String typeName() {
        return "F32";
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        MemorySegment.copy(data, LE_FLOAT, (long) row * cols * 4, dst, off, cols);
    }

    @Override
    public float dotRow(int row, float[] x, int xOff) {
        long base = (long) row * cols * 4;
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        int bound = F.loopBound(cols);
        for (; i < bound; i += F.length()) {
            FloatVector w = FloatVector.fromMemorySegment(F, data, base + 4L * i, ByteOrder.LITTLE_ENDIAN);
            acc = w.fma(FloatVector.fromArray(F, x, xOff + i), acc);
        }
        float s = VectorMath.sum(acc);
        for (; i < cols; i++) {
            s += data.get(LE_FLOAT, base + 4L * i) * x[xOff + i];
        }
        return s;
    }
}
