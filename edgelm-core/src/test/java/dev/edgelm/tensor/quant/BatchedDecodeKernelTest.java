package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The decode kernels of Q8_0 and Q4_0 with one token and with n independent tokens ({@code multiplyEach},
 * batched decode): every token of a batch gets exactly the bits of its one-token product and of
 * {@code dotRow}, for n = 2..17 (the eight-, four-, two- and one-token kernels in every combination: on 8 lanes
 * 15 is 8 + 4 + 2 + 1, 17 is 8 + 8 + 1; on 16 lanes 5..7 are 4 + ones, 11 is 8 + three ones, 13 is 8 + 4 + 1, and
 * the lane sums of a pass of four or eight land in their tokens' places), on one and two threads; and both agree with the value definition (Q8_0: {@code q * d}; Q4_0: {@code (nibble - 8) * d},
 * decoded here from the bytes, d by {@link Blocks#half}) summed in double.
 */
class BatchedDecodeKernelTest {
    private static byte[] randomBlocks(GgmlType type, int rows, int cols, Random r) {
        byte[] bytes = new byte[(int) (rows * type.byteSize(cols))];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += type.typeSize()) {
            Blocks.half(bytes, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.01)));
        }
        return bytes;
    }

    /** Row {@code row} by the format's definition, straight from the bytes. */
    private static double[] reference(GgmlType type, byte[] bytes, int row, int cols) {
        double[] w = new double[cols];
        int o = (int) (row * type.byteSize(cols));
        for (int b = 0; b < cols / 32; b++, o += type.typeSize()) {
            double d = Blocks.half((bytes[o] & 0xFF) | (bytes[o + 1] & 0xFF) << 8);
            for (int j = 0; j < 32; j++) {
                w[b * 32 + j] = switch (type) {
                    case Q8_0 -> bytes[o + 2 + j] * d;
                    case Q4_0 -> (j < 16 ? (bytes[o + 2 + j] & 0x0F) : (bytes[o + 2 + j - 16] & 0xFF) >> 4) * d - 8 * d;
                    default -> throw new IllegalArgumentException(type.name());
                };
            }
        }
        return w;
    }

    @ParameterizedTest
    @EnumSource(names = {"Q8_0", "Q4_0"})
    void eachTokenIsItsOneTokenProductBitForBit(GgmlType type) {
        Random r = new Random(7 + type.id());
        int rows = 45;
        for (int cols : new int[] {24 * 32, 40 * 32}) { // eight-token groups up to 1024 columns, four beyond
            check(type, rows, cols, r);
        }
    }

    private static void check(GgmlType type, int rows, int cols, Random r) {
        byte[] bytes = randomBlocks(type, rows, cols, r);
        WeightMatrix m = GgmlMatrices.create(type, Blocks.segment(bytes), rows, cols);
        double[][] w = new double[rows][];
        for (int row = 0; row < rows; row++) {
            w[row] = reference(type, bytes, row, cols);
        }
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17}) {
                    float[] x = new float[n * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) r.nextGaussian();
                    }
                    int stride = rows + 5;
                    float[] out = new float[n * stride];
                    m.matmul(pool, new Activations().set(x, n, cols).eachToken(true), out, stride, 3);
                    for (int t = 0; t < n; t++) {
                        float[] xt = new float[cols];
                        System.arraycopy(x, t * cols, xt, 0, cols);
                        float[] one = new float[rows];
                        m.matmul(pool, xt, 1, one);
                        for (int row = 0; row < rows; row++) {
                            String where = type + " threads " + threads + " n " + n + " token " + t + " row " + row;
                            float got = out[t * stride + 3 + row];
                            assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(got), where + ": " + one[row] + " vs " + got);
                            assertEquals(Float.floatToRawIntBits(m.dotRow(row, x, t * cols)), Float.floatToRawIntBits(got), where + " (dotRow)");
                            double dot = 0;
                            double mag = 0;
                            for (int i = 0; i < cols; i++) {
                                dot += w[row][i] * xt[i];
                                mag += Math.abs(w[row][i] * xt[i]);
                            }
                            if (type != GgmlType.Q4_0 || !Q4_0Matrix.INT_DECODE) { // Q4_0's int8 decode: Q4LanesTest
                                assertEquals(dot, got, 2e-6 * mag, where + " (reference)");
                            }
                        }
                    }
                }
            }
        }
    }
}
