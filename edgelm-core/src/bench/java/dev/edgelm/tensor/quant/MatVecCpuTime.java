package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * One-token matvec on the calling thread, in GB of matrix bytes per CPU-second of that thread: on a host
 * loaded by other work, JMH's wall-clock rates move by several times between iterations, and CPU time is
 * the steadier figure (still lower than a quiet minute's, so compare kernels in alternating runs only).
 * Random blocks with moderate fp16 scales. Run (after {@code bin/mvn -B -Pbench package -DskipTests}):
 * {@code java --add-modules jdk.incubator.vector -Xbatch -cp target/benchmarks.jar
 * dev.edgelm.tensor.quant.MatVecCpuTime ROWS COLS TYPE...}, e.g. {@code 65536 1024 Q4_K Q5_K Q6_K Q8_0}.
 */
public final class MatVecCpuTime {
    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        var mx = ManagementFactory.getThreadMXBean();
        for (int ti = 2; ti < a.length; ti++) {
            GgmlType t = GgmlType.valueOf(a[ti]);
            Random r = new Random(1);
            byte[] b = new byte[(int) (rows * t.byteSize(cols))];
            r.nextBytes(b);
            int[] halves = switch (t) { case Q6_K -> new int[] {208}; case Q8_0 -> new int[] {0}; default -> new int[] {0, 2}; };
            for (int o = 0; o < b.length; o += t.typeSize()) {
                for (int f : halves) {
                    short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.001));
                    b[o + f] = (byte) h;
                    b[o + f + 1] = (byte) (h >> 8);
                }
            }
            MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
            MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
            WeightMatrix m = GgmlMatrices.create(t, data, rows, cols);
            float[] x = new float[cols];
            for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
            float[] out = new float[rows];
            try (Parallel pool = new Parallel(1)) {
                for (int i = 0; i < 300; i++) m.matmul(pool, x, 1, out);
                double best = 0;
                StringBuilder all = new StringBuilder();
                for (int rep = 0; rep < 7; rep++) {
                    long c0 = mx.getCurrentThreadCpuTime();
                    int n = 0;
                    while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                        for (int i = 0; i < 20; i++) m.matmul(pool, x, 1, out);
                        n += 20;
                    }
                    double s = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                    double gbs = n * (double) m.byteSize() / s * 1e-9;
                    best = Math.max(best, gbs);
                    all.append(String.format(" %.1f", gbs));
                }
                System.out.printf("%s %dx%d: best %.1f GB/cpu-s (%s) out[0]=%g%n", t, rows, cols, best, all.toString().trim(), out[0]);
            }
        }
    }
}
