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
 * dev.edgelm.tensor.quant.KernelWorkout 3000 | grep -E 'quant\.|SKIPPED'}.
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
                byte[] b = new byte[(int) (rows * t.byteSize(cols))];
                r.nextBytes(b); // random bits: the values do not matter here, only the code paths
                WeightMatrix m = GgmlMatrices.create(t, Blocks.segment(b), rows, cols);
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
            }
        }
        System.out.println("done " + (sink == 0.5 ? "(sink)" : ""));
    }
}
