package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.util.Random;

/**
 * A process that calls every block format's kernels (one-token dot product, one-token and few-token
 * matmul, row decoder) often enough for the JIT to take each of them through C1 to C2. Run by
 * {@link TieredCompilationTest} with {@code -XX:+PrintCompilation -Xbatch}; by hand: {@code java
 * --add-modules jdk.incubator.vector -XX:+PrintCompilation -Xbatch -cp CLASSPATH
 * dev.edgelm.tensor.quant.KernelWorkout 6000 | grep -E 'quant\.|SKIPPED'}. At the end it checks each
 * format's {@code dotRow} and one-token {@code matmul} against the decoded rows summed in double (as
 * {@link KernelConsistencyTest} does), so that a forced vector width ({@code -Dedgelm.simd.bits}) also
 * checks the numbers of that width's kernels, and exits with status 1 on a mismatch.
 */
public final class KernelWorkout {
    static final GgmlType[] TYPES = {GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1,
        GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K};

    private KernelWorkout() {}

    public static void main(String[] args) {
        int calls = Integer.parseInt(args[0]);
        double sink = 0;
        try (Parallel pool = new Parallel(1)) {
            for (GgmlType t : TYPES) {
                int rows = 4;
                int cols = 8 * 256; // 8 super-blocks, 64 blocks of 32
                Random r = new Random(t.ordinal());
                WeightMatrix m = GgmlMatrices.create(t, KernelConsistencyTest.randomBlocks(t, rows, cols, r), rows, cols);
                float[] x = new float[4 * cols];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) r.nextGaussian();
                }
                float[] w = new float[cols];
                float[] out = new float[4 * rows];
                for (int i = 0; i < calls; i++) {
                    sink += m.dotRow(i % rows, x, 0);
                    m.decodeRow(i % rows, w, 0);
                    sink += w[i % cols];
                    if (i % 8 == 0) {
                        m.matmul(pool, x, 1, out);
                        m.matmul(pool, x, 4, out);
                        sink += out[i % out.length];
                    }
                }
                m.matmul(pool, x, 1, out);
                for (int row = 0; row < rows; row++) {
                    m.decodeRow(row, w, 0);
                    double dot = 0;
                    double mag = 0;
                    double rounding = 0;
                    for (int i = 0; i < cols; i++) {
                        dot += (double) w[i] * x[i];
                        mag += Math.abs((double) w[i] * x[i]);
                        if (t == GgmlType.Q4_0 && Q4_0Matrix.INT_DECODE || t == GgmlType.Q4_K && Q4_KMatrix.INT_DECODE
                                || t == GgmlType.Q5_K && Q5_KMatrix.INT_DECODE) {
                            // Q4_0 / Q4_K / Q5_K decode round x to int8 per block of 32: |x - dx * xq| <= amax / 127 * (1/2 + 127 * 2^-11)
                            double amax = 0;
                            for (int j = i & ~31; j < (i & ~31) + 32; j++) {
                                amax = Math.max(amax, Math.abs(x[j]));
                            }
                            rounding += Math.abs((double) w[i]) * amax / 127 * (0.5 + 127 * Math.scalb(1.0, -11));
                        }
                    }
                    double e1 = Math.abs(m.dotRow(row, x, 0) - dot);
                    double e2 = Math.abs(out[row] - dot);
                    boolean int8 = t == GgmlType.Q6_K && Q6_KMatrix.INT8; // int8 activations: Q6_KLanesTest
                    if (!int8 && !(e1 <= 2e-6 * mag + rounding && e2 <= 2e-6 * mag + rounding)) {
                        System.out.println("MISMATCH " + t + " row " + row + ": dotRow " + m.dotRow(row, x, 0)
                                + ", matmul " + out[row] + ", decoded rows in double " + dot);
                        System.exit(1);
                    }
                }
            }
        }
        // printed so that the loop's results are used (and not removed as dead code)
        System.out.println("done, checksum " + (float) sink);
    }
}
