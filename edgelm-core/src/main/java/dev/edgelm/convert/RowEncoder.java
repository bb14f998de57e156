package dev.edgelm.convert;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.quant.Q4_0Matrix;
import dev.edgelm.tensor.quant.Q8_0Matrix;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Encodes one row of float32 values into a ggml type's bytes, bit for bit as ggml does. */
final class RowEncoder {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RowEncoder() {}

    static void encode(GgmlType type, float[] row, int cols, MemorySegment dst) {
        switch (type) {
            case F32 -> MemorySegment.copy(row, 0, dst, F32, 0, cols);
            case F16 -> {
                for (int i = 0; i < cols; i++) {
                    dst.set(U16, 2L * i, Float.floatToFloat16(row[i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < cols; i++) {
                    dst.set(U16, 2L * i, toBf16(row[i]));
                }
            }
            case Q8_0 -> Q8_0Matrix.quantize(row, 0, cols, dst, 0);
            case Q4_0 -> Q4_0Matrix.quantize(row, 0, cols, dst, 0);
            default -> throw new IllegalArgumentException("cannot encode " + type);
        }
    }

    /** ggml's GGML_FP32_TO_BF16: round to nearest even, NaN kept quiet. */
    static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 64);
        }
        return (short) ((bits + (0x7fff + ((bits >>> 16) & 1))) >>> 16);
    }
}
