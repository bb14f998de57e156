package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** F32 / BF16 / F16 rows against scalar references built from the raw bits. */
class DenseMatrixTest {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Values exactly representable in every format, so each type must decode them exactly. */
    private static float[] values(int n, SplittableRandom r) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (r.nextInt(255) - 127) / 16f; // at most 7 significant bits: exact even in bfloat16
        }
        return v;
    }

    private static WeightMatrix build(String type, float[] w, int rows, int cols, Arena arena) {
        int elem = type.equals("F32") ? 4 : 2;
        // an odd offset inside a larger segment: mapped tensors are not aligned
        MemorySegment seg = arena.allocate((long) w.length * elem + 3).asSlice(3);
        for (int i = 0; i < w.length; i++) {
            switch (type) {
                case "F32" -> seg.set(FLOAT, 4L * i, w[i]);
                case "BF16" -> seg.set(SHORT, 2L * i, (short) (Float.floatToRawIntBits(w[i]) >>> 16));
                default -> seg.set(SHORT, 2L * i, Float.floatToFloat16(w[i]));
            }
        }
        return switch (type) {
            case "F32" -> new F32Matrix(seg, rows, cols);
            case "BF16" -> new BF16Matrix(seg, rows, cols);
            default -> new F16Matrix(seg, rows, cols);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"F32", "BF16", "F16"})
    void rowsDotsAndMatmulMatchAScalarReference(String type) {
        SplittableRandom r = new SplittableRandom(7);
        try (Arena arena = Arena.ofShared(); Parallel pool = new Parallel(2)) {
            for (int cols : new int[] {1, 7, 16, 33, 100, 256}) {
                int rows = 5;
                float[] w = values(rows * cols, r);
                WeightMatrix m = build(type, w, rows, cols, arena);
                float[] row = new float[cols + 2];
                for (int i = 0; i < rows; i++) {
                    m.decodeRow(i, row, 2);
                    for (int j = 0; j < cols; j++) {
                        assertEquals(w[i * cols + j], row[2 + j], type + " decode");
                    }
                }
                int n = 3;
                float[] x = values(n * cols, r);
                float[] out = new float[n * rows];
                m.matmul(pool, x, n, out);
                float[] single = new float[rows];
                m.matmul(pool, x, 1, single);
                for (int t = 0; t < n; t++) {
                    for (int i = 0; i < rows; i++) {
                        double ref = 0;
                        for (int j = 0; j < cols; j++) {
                            ref += (double) w[i * cols + j] * x[t * cols + j];
                        }
                        // products of 7-bit values and their float sums are exact here
                        assertEquals(ref, out[t * rows + i], 1e-3, type + " matmul cols=" + cols);
                        assertEquals(ref, m.dotRow(i, x, t * cols), 1e-3, type + " dot cols=" + cols);
                    }
                }
                assertArrayEquals(java.util.Arrays.copyOf(out, rows), single, 1e-3f);
            }
        }
    }
}
