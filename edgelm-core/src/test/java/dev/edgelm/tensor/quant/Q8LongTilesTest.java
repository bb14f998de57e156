package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The tiled copy of long-row Q8_0 matrices ({@code -Dedgelm.q8.longtiles=true}): a one-token product through it gives
 * every row exactly the bits of {@code dotRow} (the file's layout through {@code dot16}), with full and partial
 * column chunks, on one and two threads. The tiled path exists only with 16 float lanes (AVX-512): elsewhere the test
 * is skipped. With the switch off (the default) no copy is made.
 */
class Q8LongTilesTest {
    @Test
    void tiledProductIsDotRowBitForBit() throws Exception {
        Assumptions.assumeTrue(Simd.BL == 16 && Simd.P == 1, "the tiled path needs 16 float lanes");
        boolean before = Q8_0Matrix.longTiles;
        Q8_0Matrix.longTiles = true;
        try {
            Random r = new Random(11);
            // 128 blocks: two full chunks; 136 blocks: two full chunks and one of 8; 192: three (the 2B's down projection)
            for (int cols : new int[] {4096, 4352, 6144}) {
                int rows = 3 * Q8_0Matrix.TILE_ROWS;
                WeightMatrix m = randomMatrix(r, rows, cols);
                float[] x = randomVector(r, cols);
                float[] first = new float[rows];
                try (Parallel one = new Parallel(1)) {
                    m.matmul(one, x, 1, first);
                }
                assertNotNull(tiles(m), "tiled path not taken"); // the copy exists once a product has taken it
                for (int threads : new int[] {1, 2}) {
                    try (Parallel pool = new Parallel(threads)) {
                        float[] out = new float[rows];
                        m.matmul(pool, x, 1, out);
                        for (int row = 0; row < rows; row++) {
                            assertEquals(Float.floatToRawIntBits(m.dotRow(row, x, 0)), Float.floatToRawIntBits(out[row]),
                                    "cols " + cols + ", row " + row + ", threads " + threads);
                        }
                    }
                }
            }
        } finally {
            Q8_0Matrix.longTiles = before;
        }
    }

    @Test
    void noCopyWithTheSwitchOffOrOnShortRows() throws Exception {
        boolean before = Q8_0Matrix.longTiles;
        try {
            Random r = new Random(12);
            // switch off on a long row; switch on with rows too short or a row count that is no multiple of the tile
            int[][] cases = {{0, 3 * Q8_0Matrix.TILE_ROWS, 4096}, {1, 3 * Q8_0Matrix.TILE_ROWS, 2048},
                             {1, 3 * Q8_0Matrix.TILE_ROWS + 1, 4096}};
            for (int[] c : cases) {
                Q8_0Matrix.longTiles = c[0] == 1;
                int rows = c[1];
                int cols = c[2];
                WeightMatrix m = randomMatrix(r, rows, cols);
                float[] x = randomVector(r, cols);
                float[] out = new float[rows];
                try (Parallel pool = new Parallel(2)) {
                    m.matmul(pool, x, 1, out);
                }
                assertNull(tiles(m), "switch " + c[0] + ", " + rows + " x " + cols + ": no copy");
                for (int row = 0; row < rows; row++) {
                    assertEquals(Float.floatToRawIntBits(m.dotRow(row, x, 0)), Float.floatToRawIntBits(out[row]),
                            rows + " x " + cols + ", row " + row);
                }
            }
        } finally {
            Q8_0Matrix.longTiles = before;
        }
    }

    /** Random Q8_0 bytes with small fp16 scales, as a matrix. */
    private static WeightMatrix randomMatrix(Random r, int rows, int cols) {
        byte[] bytes = new byte[(int) (rows * GgmlType.Q8_0.byteSize(cols))];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += GgmlType.Q8_0.typeSize()) {
            Blocks.half(bytes, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.01)));
        }
        return GgmlMatrices.create(GgmlType.Q8_0, Blocks.segment(bytes), rows, cols);
    }

    private static float[] randomVector(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    private static Object tiles(WeightMatrix m) throws ReflectiveOperationException {
        var field = Q8_0Matrix.class.getDeclaredField("tiles");
        field.setAccessible(true);
        return field.get(m);
    }
}
