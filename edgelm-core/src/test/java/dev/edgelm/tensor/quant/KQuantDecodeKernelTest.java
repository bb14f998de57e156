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
 * The Q4_K, Q5_K and Q6_K decode kernels (one-token {@code matmul}, {@code dotRow}, and independent tokens,
 * {@code multiplyEach}) against the formats' definitions: super-blocks are written by {@link Blocks} from
 * integer values, scales and mins drawn here, and the reference row is {@code d * sc * q - dmin * mn}
 * (Q6_K: {@code d * sc * q}) computed in double from those integers, never from the code under test. On the
 * 8-lane path the kernels read the activations interleaved once per matmul, so {@code dotRow} and every
 * token of a batch must still give exactly the bits of the one-token product.
 */
class KQuantDecodeKernelTest {
    private static final int ROWS = 37;

    private record Built(byte[] bytes, double[][] rows) {}

    private static Built build(GgmlType type, int cols, Random r) {
        int blocks = cols / 256;
        byte[] bytes = new byte[(int) (ROWS * type.byteSize(cols))];
        double[][] w = new double[ROWS][cols];
        for (int row = 0; row < ROWS; row++) {
            for (int b = 0; b < blocks; b++) {
                int o = (row * blocks + b) * type.typeSize();
                int d = Float.floatToFloat16((float) (0.001 + 0.01 * r.nextDouble()));
                int dmin = Float.floatToFloat16((float) (0.02 * r.nextDouble()));
                int[] q = new int[256];
                int[] sc = new int[type == GgmlType.Q6_K ? 16 : 8];
                int[] mn = new int[8];
                for (int j = 0; j < sc.length; j++) {
                    sc[j] = type == GgmlType.Q6_K ? r.nextInt(256) - 128 : r.nextInt(64);
                }
                for (int j = 0; j < 8; j++) {
                    mn[j] = r.nextInt(64);
                }
                for (int i = 0; i < 256; i++) {
                    q[i] = switch (type) {
                        case Q4_K -> r.nextInt(16);
                        case Q5_K -> r.nextInt(32);
                        default -> r.nextInt(64) - 32;
                    };
                }
                switch (type) {
                    case Q4_K -> Blocks.q4_K(bytes, o, d, dmin, sc, mn, q);
                    case Q5_K -> Blocks.q5_K(bytes, o, d, dmin, sc, mn, q);
                    default -> Blocks.q6_K(bytes, o, d, sc, q);
                }
                double dd = Blocks.half(d);
                double dm = Blocks.half(dmin);
                for (int i = 0; i < 256; i++) {
                    w[row][256 * b + i] = type == GgmlType.Q6_K
                            ? dd * sc[i / 16] * q[i]
                            : dd * sc[i / 32] * q[i] - dm * mn[i / 32];
                }
            }
        }
        return new Built(bytes, w);
    }

    @ParameterizedTest
    @EnumSource(names = {"Q4_K", "Q5_K", "Q6_K"})
    void kernelsAgreeWithTheDefinitionAndWithEachOther(GgmlType type) {
        Random r = new Random(31 + type.id());
        for (int cols : new int[] {256, 768, 1024}) {
            Built built = build(type, cols, r);
            WeightMatrix m = GgmlMatrices.create(type, Blocks.segment(built.bytes()), ROWS, cols);
            for (int threads : new int[] {1, 2}) {
                try (Parallel pool = new Parallel(threads)) {
                    for (int n = 1; n <= 6; n++) {
                        float[] x = new float[n * cols];
                        for (int i = 0; i < x.length; i++) {
                            x[i] = (float) r.nextGaussian();
                        }
                        int stride = ROWS + 3;
                        float[] out = new float[n * stride];
                        m.matmul(pool, new Activations().set(x, n, cols).eachToken(true), out, stride, 2);
                        for (int t = 0; t < n; t++) {
                            float[] xt = new float[cols];
                            System.arraycopy(x, t * cols, xt, 0, cols);
                            float[] one = new float[ROWS];
                            m.matmul(pool, xt, 1, one);
                            for (int row = 0; row < ROWS; row++) {
                                String where = type + " cols " + cols + " threads " + threads + " n " + n + " token " + t
                                        + " row " + row;
                                double dot = 0;
                                double mag = 0;
                                for (int i = 0; i < cols; i++) {
                                    dot += built.rows()[row][i] * xt[i];
                                    mag += Math.abs(built.rows()[row][i] * xt[i]);
                                }
                                if (!(type == GgmlType.Q6_K && Q6_KMatrix.INT8)
                                        && !(type == GgmlType.Q4_K && Q4_KMatrix.INT_DECODE)
                                        && !(type == GgmlType.Q5_K && Q5_KMatrix.INT_DECODE)) { // int8 decode: Q6_KLanesTest, Q4LanesTest, Q5_KLanesTest
                                    assertEquals(dot, one[row], 3e-6 * mag, where + " (one-token matmul against the definition)");
                                }
                                float got = out[t * stride + 2 + row];
                                assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(got),
                                        where + " (each token): " + one[row] + " vs " + got);
                                assertEquals(Float.floatToRawIntBits(one[row]), Float.floatToRawIntBits(m.dotRow(row, x, t * cols)),
                                        where + " (dotRow)");
                            }
                        }
                    }
                }
            }
        }
    }
}
