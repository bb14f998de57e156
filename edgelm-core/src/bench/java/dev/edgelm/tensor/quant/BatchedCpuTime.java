package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * The batched decode product ({@code multiplyEach}: n independent tokens, each row read once for all) on the
 * calling thread, in token-rows per CPU-second of that thread divided by the rows, i.e. tokens through the whole
 * matrix per CPU-second (see {@link MatVecCpuTime} for why CPU time). Random blocks with moderate fp16 scales.
 * Run (after {@code bin/mvn -B -Pbench package -DskipTests}): {@code java --add-modules jdk.incubator.vector -cp
 * target/benchmarks.jar dev.edgelm.tensor.quant.BatchedCpuTime TYPE ROWSxCOLS... -- N...}, e.g.
 * {@code Q8_0 3584x1024 1024x3584 -- 1 4 8}; kernel switches as system properties (e.g. {@code -Dedgelm.q8.each8=false}).
 */
public final class BatchedCpuTime {
    public static void main(String[] a) {
        GgmlType t = GgmlType.valueOf(a[0]);
        int sep = java.util.Arrays.asList(a).indexOf("--");
        var mx = ManagementFactory.getThreadMXBean();
        for (int si = 1; si < sep; si++) {
            String[] rc = a[si].split("x");
            int rows = Integer.parseInt(rc[0]);
            int cols = Integer.parseInt(rc[1]);
            Random r = new Random(1);
            byte[] b = new byte[(int) (rows * t.byteSize(cols))];
            r.nextBytes(b);
            for (int o = 0; o < b.length; o += t.typeSize()) {
                short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.001));
                b[o] = (byte) h;
                b[o + 1] = (byte) (h >> 8);
            }
            MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
            MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
            WeightMatrix m = GgmlMatrices.create(t, data, rows, cols);
            for (int ni = sep + 1; ni < a.length; ni++) {
                int n = Integer.parseInt(a[ni]);
                float[] x = new float[n * cols];
                for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
                float[] out = new float[n * rows];
                Activations in = new Activations();
                try (Parallel pool = new Parallel(1)) {
                    long warm = Math.max(20, 3_000_000_000L / ((long) rows * cols * n));
                    for (int i = 0; i < warm; i++) m.matmul(pool, in.set(x, n, cols).eachToken(n > 1), out);
                    double best = 0;
                    StringBuilder all = new StringBuilder();
                    for (int rep = 0; rep < 5; rep++) {
                        long c0 = mx.getCurrentThreadCpuTime();
                        long calls = 0;
                        while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                            for (int i = 0; i < 5; i++) m.matmul(pool, in.set(x, n, cols).eachToken(n > 1), out);
                            calls += 5;
                        }
                        double s = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                        double tps = calls * n / s;
                        best = Math.max(best, tps);
                        all.append(String.format(" %.0f", tps));
                    }
                    System.out.printf("%s %dx%d n=%d: best %.0f tokens/cpu-s (%s) out[0]=%g%n", t, rows, cols, n, best, all.toString().trim(), out[0]);
                }
            }
        }
    }
}
