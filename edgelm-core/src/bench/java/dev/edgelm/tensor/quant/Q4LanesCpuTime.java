package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * One-token Q4_0 or Q4_K matvec on one thread: the float kernel ({@code dotFloat}) against the integer
 * blocks-in-lanes kernel ({@link Q4Lanes}, the activation rounding included), in GB of Q4_0 bytes per CPU-second,
 * taking turns within each of seven rounds. Run (after {@code bin/mvn -B -Pbench package -DskipTests}):
 * {@code java --add-modules jdk.incubator.vector -cp edgelm-core/target/benchmarks.jar
 * dev.edgelm.tensor.quant.Q4LanesCpuTime ROWS COLS [Q4_0|Q4_K]} (e.g. {@code 128 3584} in L2, {@code 65536 1024} streamed).
 */
public final class Q4LanesCpuTime {
    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        GgmlType t = a.length > 2 ? GgmlType.valueOf(a[2]) : GgmlType.Q4_0;
        var mx = ManagementFactory.getThreadMXBean();
        Random r = new Random(1);
        byte[] b = new byte[(int) (rows * t.byteSize(cols))];
        r.nextBytes(b);
        for (int o = 0; o < b.length; o += t.typeSize()) {
            for (int f = 0; f < (t == GgmlType.Q4_0 ? 2 : 4); f += 2) {
                short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.001));
                b[o + f] = (byte) h;
                b[o + f + 1] = (byte) (h >> 8);
            }
        }
        MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
        QuantizedMatrix m = (QuantizedMatrix) GgmlMatrices.create(t, data, rows, cols);
        Q4Lanes.Format format = t == GgmlType.Q4_0 ? Q4Lanes.Format.Q4_0 : Q4Lanes.Format.Q4_K;
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        float[] out = new float[rows];
        float[] out2 = new float[rows];
        try (Parallel pool = new Parallel(1)) {
            Q4Lanes lanes = Q4Lanes.of(format, data, rows, cols, null);
            float[] sums = new float[cols / 32 + QuantizedMatrix.SUM_PAD];
            Q4Lanes.Input in = Q4Lanes.Input.allocate(cols);
            Runnable fl = m instanceof Q4_0Matrix q
                    ? () -> { for (int i = 0; i < rows; i++) out[i] = q.dotFloat(i, x, 0); }
                    : () -> {
                        Q4_KMatrix q = (Q4_KMatrix) m;
                        q.runSums(x, 0, sums);
                        for (int i = 0; i < rows; i++) out[i] = q.dotFloat(i, x, 0, sums);
                    };
            Runnable il = () -> {
                in.round(x, 0, cols);
                for (int i = 0; i < rows; i++) out2[i] = lanes.dot(i, in);
            };
            for (int i = 0; i < 300; i++) { fl.run(); il.run(); }
            double maxRel = 0;
            for (int i = 0; i < rows; i++) maxRel = Math.max(maxRel, Math.abs(out[i] - out2[i]) / (Math.abs(out[i]) + 1e-3));
            StringBuilder sf = new StringBuilder(), si = new StringBuilder();
            double bf = 0, bi = 0;
            for (int rep = 0; rep < 7; rep++) {
                double gf = rate(mx, fl, m.byteSize());
                double gi = rate(mx, il, m.byteSize());
                bf = Math.max(bf, gf);
                bi = Math.max(bi, gi);
                sf.append(String.format(" %.1f", gf));
                si.append(String.format(" %.1f", gi));
            }
            System.out.printf("%s %dx%d G=%d: float best %.1f (%s)  int best %.1f (%s) GB/cpu-s; ratio %.2f; max rel diff %.3g%n",
                    t, rows, cols, Q4Lanes.G, bf, sf.toString().trim(), bi, si.toString().trim(), bi / bf, maxRel);
        }
    }

    private static double rate(java.lang.management.ThreadMXBean mx, Runnable k, long bytes) {
        long c0 = mx.getCurrentThreadCpuTime();
        int n = 0;
        while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
            for (int i = 0; i < 10; i++) k.run();
            n += 10;
        }
        return n * (double) bytes / ((mx.getCurrentThreadCpuTime() - c0) * 1e-9) * 1e-9;
    }
}
