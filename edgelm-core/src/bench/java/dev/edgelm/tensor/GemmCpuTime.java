package dev.edgelm.tensor;

import dev.edgelm.tensor.quant.GgmlMatrices;
import dev.edgelm.tensor.quant.Q4_0Matrix;
import dev.edgelm.tensor.quant.Q8_0Matrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * The chunk GEMM's kernels (see {@link GemmBenchmark}) on the calling thread, in GFLOP per CPU-second of that
 * thread (with {@code -Dthreads=N} > 1: GFLOP/s of wall time), the kernels alternating round by round in one JVM: on a host loaded by other work JMH's wall-clock
 * rates move by several times between iterations, CPU time much less. Run (after {@code bin/mvn -B -Pbench
 * package -DskipTests}): {@code java --add-modules jdk.incubator.vector -cp edgelm-core/target/benchmarks.jar
 * dev.edgelm.tensor.GemmCpuTime TYPE ROWSxCOLSxTOKENS... }, e.g. {@code F16 3072x768x1024 3584x1024x256}.
 * {@code -Dkernels=tile6,panel8,panel12,own} picks the kernels ({@code panel8} / {@code panel12}: the 16-lane panel tile of 8 or 12 rows; {@code own}: the format's own prefill path, e.g. int8 activations), {@code -Drounds=5} the rounds of 0.5 CPU-seconds.
 */
public final class GemmCpuTime {
    public static void main(String[] a) {
        GgmlType t = GgmlType.valueOf(a[0]);
        String[] kernels = System.getProperty("kernels", "tile6,panel8").split(",");
        int rounds = Integer.getInteger("rounds", 5);
        int threads = Integer.getInteger("threads", 1);
        var mx = ManagementFactory.getThreadMXBean();
        for (int si = 1; si < a.length; si++) {
            String[] p = a[si].split("x");
            int rows = Integer.parseInt(p[0]);
            int cols = Integer.parseInt(p[1]);
            int tokens = Integer.parseInt(p[2]);
            WeightMatrix m = matrix(t, rows, cols);
            SplittableRandom r = new SplittableRandom(2);
            float[] x = new float[tokens * cols];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) r.nextGaussian();
            }
            Activations in = new Activations().set(x, tokens, cols);
            float[] out = new float[tokens * rows];
            double flops = 2.0 * rows * cols * tokens;
            StringBuilder[] line = new StringBuilder[kernels.length];
            double[] best = new double[kernels.length];
            try (Parallel pool = new Parallel(threads)) {
                for (int rep = -1; rep < rounds; rep++) {
                    for (int ki = 0; ki < kernels.length; ki++) {
                        long c0 = clock(mx, threads);
                        int n = 0;
                        while (clock(mx, threads) - c0 < 500_000_000L) {
                            run(kernels[ki], m, pool, in, out);
                            n++;
                        }
                        double s = (clock(mx, threads) - c0) * 1e-9;
                        double g = n * flops / s * 1e-9;
                        if (rep >= 0) {
                            if (line[ki] == null) {
                                line[ki] = new StringBuilder();
                            }
                            line[ki].append(String.format(" %.1f", g));
                            best[ki] = Math.max(best[ki], g);
                        }
                    }
                }
            }
            for (int ki = 0; ki < kernels.length; ki++) {
                System.out.printf("%s %s %-7s %d thread(s) best %6.1f GFLOP/s (%s)%n", t, a[si], kernels[ki], threads, best[ki],
                        line[ki].toString().trim());
            }
        }
    }

    /** CPU time of the calling thread with one thread; wall time with more (the workers' CPU time is not the caller's). */
    private static long clock(java.lang.management.ThreadMXBean mx, int threads) {
        return threads == 1 ? mx.getCurrentThreadCpuTime() : System.nanoTime();
    }

    static void run(String kernel, WeightMatrix m, Parallel pool, Activations in, float[] out) {
        switch (kernel) {
            case "panel8" -> m.matmulPanels(pool, in, out, m.rows(), 0, false);
            case "panel12" -> m.matmulPanels(pool, in, out, m.rows(), 0, true);
            case "tile6" -> PackedGemm.multiply(m, pool, in, out, m.rows(), 0);
            case "tile6blocked" -> { // the panel blocks whatever the size of the activations
                int was = PackedGemm.blockAboveFloats;
                PackedGemm.blockAboveFloats = 0;
                PackedGemm.multiply(m, pool, in, out, m.rows(), 0);
                PackedGemm.blockAboveFloats = was;
            }
            // the format's own prefill path (8 lanes: Q4_0 on quant.Int8Gemm, Q4_K too with -Dedgelm.q4k.int8gemm=true;
            // 16 lanes: Q4_0 and Q4_K on quant.Q4_0Gemm's integer tile)
            case "own" -> m.matmul(pool, in, out);
            default -> throw new IllegalArgumentException("kernel " + kernel);
        }
    }

    static WeightMatrix matrix(GgmlType t, int rows, int cols) {
        SplittableRandom r = new SplittableRandom(1);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (r.nextGaussian() * 0.02);
        }
        MemorySegment seg = Arena.ofAuto().allocate(t.byteSize((long) rows * cols), 64);
        ValueLayout.OfShort le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        switch (t) {
            case Q8_0 -> Q8_0Matrix.quantize(w, 0, w.length, seg, 0);
            case Q4_0 -> Q4_0Matrix.quantize(w, 0, w.length, seg, 0);
            case Q5_K, Q6_K -> { // random values and scales, a moderate fp16 d (and dmin) where ggml puts it
                for (long o = 0; o < seg.byteSize(); o++) {
                    seg.set(ValueLayout.JAVA_BYTE, o, (byte) r.nextInt(256));
                }
                for (long o = 0; o < seg.byteSize(); o += t.typeSize()) {
                    if (t == GgmlType.Q5_K) {
                        seg.set(le, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.001)));
                        seg.set(le, o + 2, Float.floatToFloat16((float) Math.abs(r.nextGaussian() * 0.001)));
                    } else {
                        seg.set(le, o + t.typeSize() - 2, Float.floatToFloat16((float) (r.nextGaussian() * 0.001)));
                    }
                }
            }
            case Q4_K -> { // random nibbles and 6-bit scales, moderate fp16 d and dmin
                for (long o = 0; o < seg.byteSize(); o++) {
                    seg.set(ValueLayout.JAVA_BYTE, o, (byte) r.nextInt(256));
                }
                for (long o = 0; o < seg.byteSize(); o += t.typeSize()) {
                    seg.set(le, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.001)));
                    seg.set(le, o + 2, Float.floatToFloat16((float) Math.abs(r.nextGaussian() * 0.001)));
                }
            }
            case F16 -> {
                for (int i = 0; i < w.length; i++) {
                    seg.set(le, 2L * i, Float.floatToFloat16(w[i]));
                }
            }
            case F32 -> MemorySegment.copy(w, 0, seg, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, w.length);
            case BF16 -> {
                for (int i = 0; i < w.length; i++) {
                    seg.set(le, 2L * i, (short) (Float.floatToRawIntBits(w[i]) >>> 16));
                }
            }
            default -> throw new IllegalArgumentException("type " + t);
        }
        return GgmlMatrices.create(t, seg, rows, cols);
    }
}
