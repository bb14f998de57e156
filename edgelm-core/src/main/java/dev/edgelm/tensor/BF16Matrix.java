package dev.edgelm.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * bfloat16 rows. A bf16 value is the upper half of a float32, so widening is exact: sign-extend the 16
 * bits to 32 (the extension bits are shifted out) and shift left by 16.
 */
public final class BF16Matrix extends WeightMatrix {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Short> S = I.length() == 16 ? ShortVector.SPECIES_256
            : I.length() == 8 ? ShortVector.SPECIES_128 : ShortVector.SPECIES_64;
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public BF16Matrix(MemorySegment data, int rows, int cols) {
        super(data, rows, cols);
    }

    @Override
    public String typeName() {
        return "BF16";
    }

    static float toFloat(short bits) {
        return Float.intBitsToFloat(bits << 16);
    }

    private static FloatVector load(MemorySegment data, long byteOffset) {
        ShortVector s = ShortVector.fromMemorySegment(S, data, byteOffset, ByteOrder.LITTLE_ENDIAN);
        IntVector i = (IntVector) s.convertShape(VectorOperators.S2I, I, 0);
        return i.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    @Override
    public void decodeRow(int row, float[] dst, int off) {
        long base = (long) row * cols * 2;
        int i = 0;
        int bound = F.loopBound(cols);
        for (; i < bound; i += F.length()) {
            load(data, base + 2L * i).intoArray(dst, off + i);
        }
        for (; i < cols; i++) {
            dst[off + i] = toFloat(data.get(LE_SHORT, base + 2L * i));
        }
    }

    @Override
    public float dotRow(int row, float[] x, int xOff) {
        long base = (long) row * cols * 2;
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        int bound = F.loopBound(cols);
        for (; i < bound; i += F.length()) {
            acc = load(data, base + 2L * i).fma(FloatVector.fromArray(F, x, xOff + i), acc);
        }
        float s = VectorMath.sum(acc);
        for (; i < cols; i++) {
            s += toFloat(data.get(LE_SHORT, base + 2L * i)) * x[xOff + i];
        }
        return s;
    }
}
