package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * Q6_K one-token matvec on one thread: the file kernel ({@code Q6_KMatrix} through {@code matmul}) against the
 * integer sub-blocks-in-lanes kernel ({@link Q6_KLanes}, activations rounded per call), taking turns in each of
 * seven 0.3 CPU-second rounds. Rows per CPU-second and GB of Q6_K file bytes per CPU-second of the calling thread.
 * Run: {@code java --add-modules jdk.incubator.vector -cp target/benchmarks.jar dev.edgelm.tensor.quant.Q6KLanesCpuTime ROWS COLS}
 * (248320 1024: the 0.8B head streamed from memory; 512 1024: in L2).
 */
public final class Q6KLanesCpuTime {
    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        var mx = ManagementFactory.getThreadMXBean();
        GgmlType t = GgmlType.Q6_K;
        Random r = new Random(1);
        byte[] b = new byte[(int) (rows * t.byteSize(cols))];
        r.nextBytes(b);
        for (int o = 0; o < b.length; o += t.typeSize()) {
            short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.001));
            b[o + 208] = (byte) h;
            b[o + 209] = (byte) (h >> 8);
        }
        MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
        Q6_KMatrix m = new Q6_KMatrix(data, rows, cols);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        float[] out = new float[rows];
        float[] out2 = new float[rows];
        int blocks = cols / 256;
        try (Parallel pool = new Parallel(1)) {
            MemorySegment w = Q6_KLanes.repack(data, rows, cols, Arena.ofAuto(), pool);
            long rb = Q6_KLanes.rowBytes(blocks);
            short[] xq = new short[cols];
            float[] dx = new float[blocks];
            Runnable file = () -> m.matmul(pool, x, 1, out);
            Runnable lanes = () -> {
                Q6_KLanes.quantize(x, 0, cols, xq, 0, dx, 0);
                for (int row = 0; row < rows; row++) out2[row] = Q6_KLanes.dot(w, row * rb, blocks, xq, 0, dx, 0);
            };
            for (int i = 0; i < 200; i++) { file.run(); lanes.run(); }
            double err = 0, ref = 0;
            for (int i = 0; i < rows; i++) { err = Math.max(err, Math.abs(out[i] - out2[i])); ref = Math.max(ref, Math.abs(out[i])); }
            System.out.printf("max |file - lanes| %.3g (max |out| %.3g)%n", err, ref);
            String[] names = {"file", "lanes"};
            Runnable[] ks = {file, lanes};
            double[] best = new double[2];
            StringBuilder[] all = {new StringBuilder(), new StringBuilder()};
            for (int rep = 0; rep < 7; rep++) {
                for (int k = 0; k < ks.length; k++) {
                    long c0 = mx.getCurrentThreadCpuTime();
                    int n = 0;
                    while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                        for (int i = 0; i < Math.max(1, 2_000_000 / rows); i++) ks[k].run();
                        n += Math.max(1, 2_000_000 / rows);
                    }
                    double s = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                    double gbs = n * (double) m.byteSize() / s * 1e-9;
                    best[k] = Math.max(best[k], gbs);
                    all[k].append(String.format(" %.2f", gbs));
                }
            }
            for (int k = 0; k < ks.length; k++) {
                System.out.printf("%s %dx%d: best %.2f GB(Q6_K)/cpu-s, %.3g rows/cpu-s (%s)%n", names[k], rows, cols, best[k],
                        best[k] * 1e9 / m.byteSize() * rows, all[k].toString().trim());
            }
        }
    }
}
