package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.I;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/** Joining the 32-bit high-bit word of Q5_0 / Q5_1 blocks to their nibbles. */
final class Bits {
    /** 0, 1, 2, ... 31: lane i of a vector for values [e, e + L) shifts the word by e + i. */
    private static final int[] IOTA = new int[32];

    static {
        for (int i = 0; i < IOTA.length; i++) {
            IOTA[i] = i;
        }
    }

    private Bits() {}

    /**
     * Values [e, e + L) of a 32-value block as floats: the 4-bit {@code nibbles} (part {@code part} of the
     * byte vector) with bit {@code e + lane} of {@code qh} as their fifth bit, minus {@code bias}.
     */
    static FloatVector fiveBit(ByteVector nibbles, int part, int qh, int e, int bias) {
        IntVector high = IntVector.broadcast(I, qh)
                .lanewise(VectorOperators.LSHR, IntVector.fromArray(I, IOTA, e))
                .and(1).lanewise(VectorOperators.LSHL, 4);
        return (FloatVector) Simd.toInt(nibbles, part).or(high).sub(bias).convert(VectorOperators.I2F, 0);
    }
}
