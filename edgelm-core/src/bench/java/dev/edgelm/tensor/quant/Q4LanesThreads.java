package dev.edgelm.tensor.quant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The one-token {@link Q4Lanes} kernel on one and on two platform threads at once, each thread over a contiguous
 * slice of the rows, against a plain Vector API read of the same copy's bytes on the same threads: GB of copy bytes
 * per wall second, best of {@code passes}, the variants alternating. Tells whether the kernel or the memory bounds a
 * thread, and whether the second thread adds its own stream. Run (after {@code bin/mvn -B -Pbench package
 * -DskipTests}): {@code java --add-modules jdk.incubator.vector -cp edgelm-core/target/benchmarks.jar
 * dev.edgelm.tensor.quant.Q4LanesThreads ROWS COLS [ROUNDS]} ({@code 1500000 1024}: a 1 GB copy, streamed;
 * {@code 1024 1024}: in L2).
 */
public final class Q4LanesThreads {
    private static final VectorSpecies<Byte> B = ByteVector.SPECIES_PREFERRED;

    public static void main(String[] a) throws Exception {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        int rounds = a.length > 2 ? Integer.parseInt(a[2]) : 4;
        Random r = new Random(1);
        long fileBytes = (long) rows * cols / 32 * 18;
        MemorySegment data = Arena.ofAuto().allocate(fileBytes, 64);
        for (long o = 0; o < fileBytes; o += 8) {
            data.set(ValueLayout.JAVA_LONG_UNALIGNED, o, r.nextLong());
        }
        for (long o = 0; o < fileBytes; o += 18) {
            data.set(ValueLayout.JAVA_SHORT_UNALIGNED, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.001)));
        }
        Q4Lanes lanes = Q4Lanes.of(Q4Lanes.Format.Q4_0, data, rows, cols, null);
        data = null;
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        long bytes = lanes.rowBytes * rows;
        for (int round = 0; round < rounds; round++) {
            StringBuilder sb = new StringBuilder("round " + round + ":");
            for (int threads = 1; threads <= 2; threads++) {
                double k = best(threads, lanes, x, false, rows, cols, bytes);
                sb.append(String.format("  %d thr kernel %.1f", threads, k));
                double rd = best(threads, lanes, x, true, rows, cols, bytes);
                sb.append(String.format(" read %.1f GB/s", rd));
            }
            System.out.println(sb);
        }
    }

    private static double best(int threads, Q4Lanes lanes, float[] x, boolean read, int rows, int cols, long bytes)
            throws Exception {
        double best = 0;
        long passes = Math.max(3, Math.min(200, 2_000_000_000L / bytes));
        for (int p = 0; p < passes; p++) {
            best = Math.max(best, pass(threads, lanes, x, read, rows, cols, bytes));
        }
        return best;
    }

    static volatile long sink;

    private static double pass(int threads, Q4Lanes lanes, float[] x, boolean read, int rows, int cols, long bytes)
            throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        CyclicBarrier end = new CyclicBarrier(threads + 1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int r0 = (int) ((long) rows * t / threads);
            int r1 = (int) ((long) rows * (t + 1) / threads);
            ts[t] = new Thread(() -> {
                Q4Lanes.Input in = Q4Lanes.Input.allocate(cols);
                in.round(x, 0, cols);
                float[] out = new float[r1 - r0];
                try {
                    start.await();
                    if (read) {
                        sink += readLoop(lanes.packed, r0 * lanes.rowBytes, r1 * lanes.rowBytes);
                    } else {
                        for (int row = r0; row < r1; row++) {
                            out[row - r0] = lanes.dot(row, in);
                        }
                        sink += (long) out[0];
                    }
                    end.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ts[t].start();
        }
        start.await();
        long t0 = System.nanoTime();
        end.await();
        long t1 = System.nanoTime();
        for (Thread t : ts) t.join();
        return bytes / ((t1 - t0) * 1e-9) * 1e-9;
    }

    private static long readLoop(MemorySegment m, long from, long to) {
        ByteVector a0 = ByteVector.zero(B), a1 = a0, a2 = a0, a3 = a0;
        int w = B.vectorByteSize();
        long o = from;
        for (; o + 4L * w <= to; o += 4L * w) {
            a0 = a0.or(ByteVector.fromMemorySegment(B, m, o, java.nio.ByteOrder.LITTLE_ENDIAN));
            a1 = a1.or(ByteVector.fromMemorySegment(B, m, o + w, java.nio.ByteOrder.LITTLE_ENDIAN));
            a2 = a2.or(ByteVector.fromMemorySegment(B, m, o + 2L * w, java.nio.ByteOrder.LITTLE_ENDIAN));
            a3 = a3.or(ByteVector.fromMemorySegment(B, m, o + 3L * w, java.nio.ByteOrder.LITTLE_ENDIAN));
        }
        return a0.or(a1).or(a2).or(a3).reduceLanes(VectorOperators.OR);
    }
}
