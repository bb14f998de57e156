package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** F16 rows widened in bulk: IEEE half-precision bit patterns against their values derived by hand. */
class F16MatrixTest {
    @Test
    void specialAndSubnormalHalvesDecodeExactly() {
        short[] bits = {0x3C00, (short) 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, (short) 0x8000, 0x7C00, (short) 0xFC00,
                0x3555, 0x7E00};
        float[] want = {1f, -2f, 65504f, 0x1p-24f, 1023 * 0x1p-24f, 0x1p-14f, -0f, Float.POSITIVE_INFINITY,
                Float.NEGATIVE_INFINITY, 0x1.554p-2f, Float.NaN};
        int cols = bits.length;
        try (Arena arena = Arena.ofConfined()) {
            // two rows at an odd byte offset: the second row starts mid-segment
            MemorySegment seg = arena.allocate(4L * cols + 1).asSlice(1);
            ValueLayout.OfShort le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < cols; i++) {
                seg.set(le, 2L * i, (short) 0);
                seg.set(le, 2L * (cols + i), bits[i]);
            }
            float[] row = new float[cols + 3];
            new F16Matrix(seg, 2, cols).decodeRow(1, row, 3);
            for (int i = 0; i < cols - 1; i++) {
                assertEquals(Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(row[3 + i]), "half 0x" + Integer.toHexString(bits[i] & 0xFFFF));
            }
            assertTrue(Float.isNaN(row[3 + cols - 1]));
        }
    }
}
