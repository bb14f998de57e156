package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * For random blocks of every format: {@code dotRow} equals the dot product of {@code decodeRow} with x
 * (computed here in double) within float rounding, for several row lengths, and {@code matmul} with one
 * and several tokens, on one and two threads, equals the scalar reference (except Q4_0 prefill where it
 * rounds activations to int8: {@link Q4_0GemmTest}, and Q4_K's on 8-lane machines: {@link Q4_KInt8GemmTest}).
 */
class KernelConsistencyTest {
    /** Byte offsets of the fp16 scale fields in each block: set to moderate random halves, not random bits. */
    private static final Map<GgmlType, int[]> HALF_FIELDS = Map.of(
            GgmlType.Q8_0, new int[] {0},
            GgmlType.Q4_0, new int[] {0},
            GgmlType.Q4_1, new int[] {0, 2},
            GgmlType.Q5_0, new int[] {0},
            GgmlType.Q5_1, new int[] {0, 2},
            GgmlType.Q2_K, new int[] {80, 82},
            GgmlType.Q3_K, new int[] {108},
            GgmlType.Q4_K, new int[] {0, 2},
            GgmlType.Q5_K, new int[] {0, 2},
            GgmlType.Q6_K, new int[] {208});

    static MemorySegment randomBlocks(GgmlType type, int rows, int cols, Random r) {
        byte[] bytes = new byte[(int) (rows * type.byteSize(cols))];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += type.typeSize()) {
            for (int f : HALF_FIELDS.get(type)) {
                Blocks.half(bytes, o + f, Float.floatToFloat16((float) (r.nextGaussian() * 0.01)));
            }
        }
        return Blocks.segment(bytes);
    }

    private static float[] gaussian(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    @ParameterizedTest
    @EnumSource(names = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    void dotRowMatchesDecodedRow(GgmlType type) {
        // Q4_0 / Q4_K decode on int8 activations (checked against ggml's arithmetic in Q4LanesTest): here their float
        // kernels (kept behind -Dedgelm.q4.intdecode=false / -Dedgelm.q4k.intdecode=false) are called directly
        boolean int8 = type == GgmlType.Q4_0 && Q4_0Matrix.INT_DECODE || type == GgmlType.Q4_K && Q4_KMatrix.INT_DECODE
                || type == GgmlType.Q5_K && Q5_KMatrix.INT_DECODE;
        Random r = new Random(type.id());
        int rows = 3;
        for (int blocks : type.blockSize() == 32 ? new int[] {1, 2, 3, 7, 32, 112} : new int[] {1, 2, 3, 7, 14}) {
            int cols = blocks * type.blockSize();
            WeightMatrix m = GgmlMatrices.create(type, randomBlocks(type, rows, cols, r), rows, cols);
            float[] x = gaussian(r, cols + 5);
            float[] w = new float[cols];
            for (int row = 0; row < rows && !(type == GgmlType.Q6_K && Q6_KMatrix.INT8); row++) {
                // (Q6_K with int8 activations: dotRow checked against ggml's arithmetic in Q6_KLanesTest)
                m.decodeRow(row, w, 0);
                double dot = 0;
                double mag = 0;
                for (int i = 0; i < cols; i++) {
                    dot += (double) w[i] * x[5 + i];
                    mag += Math.abs((double) w[i] * x[5 + i]);
                }
                float got = !int8 ? m.dotRow(row, x, 5)
                        : m instanceof Q4_0Matrix q4 ? q4.dotFloat(row, x, 5)
                        : m instanceof Q5_KMatrix q5 ? q5.dotFloat(row, x, 5, q5.runSums(x, 5, new float[cols / 32 + QuantizedMatrix.SUM_PAD]))
                        : ((Q4_KMatrix) m).dotFloat(row, x, 5, ((Q4_KMatrix) m).runSums(x, 5, new float[cols / 32 + QuantizedMatrix.SUM_PAD]));
                assertEquals(dot, got, 2e-6 * mag, type + " cols " + cols + " row " + row);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    void matmulMatchesScalarReference(GgmlType type) {
        Random r = new Random(100 + type.id());
        // rows not a multiple of the 4- and 8-row tiles; enough work that one token is split between threads too
        int rows = 43;
        int cols = 3 * 256;
        assertTrue((long) rows * cols >= Parallel.MIN_PARALLEL_COST, "one-token matmul would run inline");
        WeightMatrix m = GgmlMatrices.create(type, randomBlocks(type, rows, cols, r), rows, cols);
        float[][] w = new float[rows][cols];
        for (int row = 0; row < rows; row++) {
            m.decodeRow(row, w[row], 0);
        }
        for (int threads : new int[] {1, 2}) {
            try (Parallel pool = new Parallel(threads)) {
                for (int n : new int[] {1, 4, 37, 70}) {
                    if (type == GgmlType.Q4_0 && n >= 16 && Q4_0Matrix.roundsPrefillActivations()) {
                        continue; // int8 activations: checked against ggml's arithmetic in Q4_0GemmTest
                    }
                    if (n == 1 && (type == GgmlType.Q4_0 && Q4_0Matrix.INT_DECODE || type == GgmlType.Q4_K && Q4_KMatrix.INT_DECODE)) {
                        continue; // int8 activations: checked against ggml's arithmetic in Q4LanesTest
                    }
                    if (n == 1 && type == GgmlType.Q5_K && Q5_KMatrix.INT_DECODE) {
                        continue; // int8 activations: checked against ggml's arithmetic in Q5_KLanesTest
                    }
                    if (type == GgmlType.Q4_K && n >= 16 && Q4_KMatrix.roundsPrefillActivations()) {
                        continue; // int8 activations: checked against ggml's arithmetic in Q4_KInt8GemmTest
                    }
                    if (type == GgmlType.Q6_K && n == 1 && Q6_KMatrix.INT8) {
                        continue; // int8 activations: checked against ggml's arithmetic in Q6_KLanesTest
                    }
                    float[] x = gaussian(r, n * cols);
                    int stride = rows + 3;
                    float[] out = new float[n * stride];
                    m.matmul(pool, x, n, out, stride, 2);
                    for (int t = 0; t < n; t++) {
                        for (int row = 0; row < rows; row++) {
                            double dot = 0;
                            double mag = 0;
                            for (int i = 0; i < cols; i++) {
                                dot += (double) w[row][i] * x[t * cols + i];
                                mag += Math.abs((double) w[row][i] * x[t * cols + i]);
                            }
                            assertEquals(dot, out[t * stride + 2 + row], 2e-6 * mag,
                                    type + " threads " + threads + " n " + n + " token " + t + " row " + row);
                        }
                    }
                }
            }
        }
    }
}
