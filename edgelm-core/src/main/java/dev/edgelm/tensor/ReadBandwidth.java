package dev.edgelm.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * How fast this machine reads memory right now: every byte of a set of segments (a model's weights) read
 * once per pass by the pool's threads, with the cheapest possible work per byte. Decode of a
 * bandwidth-bound model cannot move weights faster than this, so the benchmark reports its decode traffic
 * against it; measured in the same minute, the ratio holds on a shared machine whose bandwidth drifts.
 */
public final class ReadBandwidth {
    private static final VectorSpecies<Byte> B = ByteVector.SPECIES_PREFERRED;
    private static final long PIECE = 1 << 20;

    private ReadBandwidth() {}

    /** Bytes per second of the fastest of {@code passes} passes over {@code segments}. */
    public static double bytesPerSecond(Parallel pool, List<MemorySegment> segments, int passes) {
        List<MemorySegment> pieces = new ArrayList<>();
        long total = 0;
        for (MemorySegment s : segments) {
            for (long o = 0; o < s.byteSize(); o += PIECE) {
                pieces.add(s.asSlice(o, Math.min(PIECE, s.byteSize() - o)));
            }
            total += s.byteSize();
        }
        if (total == 0) {
            throw new IllegalArgumentException("nothing to read");
        }
        long[] sink = new long[pieces.size()];
        double best = 0;
        for (int p = 0; p < passes; p++) {
            long start = System.nanoTime();
            pool.forRange(pieces.size(), (from, to) -> {
                for (int i = from; i < to; i++) {
                    sink[i] += sum(pieces.get(i));
                }
            });
            best = Math.max(best, total / ((System.nanoTime() - start) / 1e9));
        }
        return best;
    }

    /**
     * The plain Java read loop: {@code threads} platform threads (not the pool), each streaming one contiguous
     * slice of a fresh {@code bytes}-byte native buffer with four independent vector accumulators, started
     * together by a barrier; a pass lasts from the first thread's start to the last one's end and the fastest
     * of {@code passes} counts. The same loop as the native tool under {@code tools/readbw}, so that the two
     * side by side tell what Java costs, and this against {@link #bytesPerSecond} what the pool, the pieces
     * and the weights' memory cost. The buffer is filled by the thread that reads it (first touch) and freed
     * on return.
     */
    public static double plainLoopBytesPerSecond(int threads, long bytes, int passes) {
        if (threads < 1 || bytes < (long) threads * 4 * B.length() || passes < 1) {
            throw new IllegalArgumentException("need >= 1 thread and pass and at least one vector step per thread");
        }
        long step = 4L * B.length();
        long slice = bytes / threads / step * step;
        long[][] start = new long[threads][passes];
        long[][] end = new long[threads][passes];
        long[] sink = new long[threads];
        CyclicBarrier barrier = new CyclicBarrier(threads);
        Throwable[] failure = new Throwable[1];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(slice * threads, 1 << 21);
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                int k = t;
                MemorySegment mine = buffer.asSlice(k * slice, slice);
                workers[t] = new Thread(() -> {
                    try {
                        mine.fill((byte) (k + 1));
                        for (int p = 0; p < passes; p++) {
                            barrier.await();
                            start[k][p] = System.nanoTime();
                            sink[k] += sum(mine);
                            end[k][p] = System.nanoTime();
                        }
                    } catch (InterruptedException | BrokenBarrierException e) {
                        Thread.currentThread().interrupt();
                    } catch (Throwable e) {
                        failure[0] = e;
                        barrier.reset();
                    }
                }, "edgelm-read-loop-" + k);
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while measuring the read loop", e);
        }
        if (failure[0] != null) {
            throw new IllegalStateException("read loop failed", failure[0]);
        }
        double best = 0;
        for (int p = 0; p < passes; p++) {
            long first = Long.MAX_VALUE;
            long last = Long.MIN_VALUE;
            for (int t = 0; t < threads; t++) {
                first = Math.min(first, start[t][p]);
                last = Math.max(last, end[t][p]);
            }
            best = Math.max(best, slice * threads / ((last - first) / 1e9));
        }
        return best;
    }

    /** A cheap reduction of every byte, so that no read can be skipped. */
    private static long sum(MemorySegment s) {
        long n = s.byteSize();
        long o = 0;
        long acc = 0;
        if (s.isNative()) {
            int step = 4 * B.length();
            ByteVector a0 = ByteVector.zero(B);
            ByteVector a1 = a0;
            ByteVector a2 = a0;
            ByteVector a3 = a0;
            for (; o + step <= n; o += step) {
                a0 = a0.or(ByteVector.fromMemorySegment(B, s, o, ByteOrder.LITTLE_ENDIAN));
                a1 = a1.or(ByteVector.fromMemorySegment(B, s, o + B.length(), ByteOrder.LITTLE_ENDIAN));
                a2 = a2.or(ByteVector.fromMemorySegment(B, s, o + 2L * B.length(), ByteOrder.LITTLE_ENDIAN));
                a3 = a3.or(ByteVector.fromMemorySegment(B, s, o + 3L * B.length(), ByteOrder.LITTLE_ENDIAN));
            }
            acc = a0.or(a1).or(a2).or(a3).reduceLanesToLong(VectorOperators.OR);
        }
        for (; o + 8 <= n; o += 8) {
            acc |= s.get(ValueLayout.JAVA_LONG_UNALIGNED, o);
        }
        for (; o < n; o++) {
            acc |= s.get(ValueLayout.JAVA_BYTE, o);
        }
        return acc;
    }
}
