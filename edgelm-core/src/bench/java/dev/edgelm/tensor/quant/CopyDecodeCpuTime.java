package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * The prefill tiles' row decoders on one thread, in ns per value (CPU time), taking turns within each of seven
 * rounds: the file's decoder (the build before the working copies), the copy's scalar loops (the first copies'
 * decoders, kept here as the reference) and the copy's vector decoders (now). Q4_0 and Q4_K: {@code decodeRow}
 * (float tiles) and {@code decodeInts} (integer tiles); Q6_K: {@code decodeRow}. Run (after
 * {@code bin/mvn -B -Pbench package -DskipTests}): {@code java --add-modules jdk.incubator.vector -cp
 * edgelm-core/target/benchmarks.jar dev.edgelm.tensor.quant.CopyDecodeCpuTime ROWS COLS Q4_0|Q4_K|Q6_K}
 * (e.g. {@code 256 3584}: 0.9 MB of Q4_0, in L2).
 */
public final class CopyDecodeCpuTime {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        GgmlType t = GgmlType.valueOf(a[2]);
        Random r = new Random(1);
        byte[] b = new byte[(int) (rows * t.byteSize(cols))];
        r.nextBytes(b);
        int[] halves = t == GgmlType.Q4_0 ? new int[] {0} : t == GgmlType.Q4_K ? new int[] {0, 2} : new int[] {208};
        for (int o = 0; o < b.length; o += t.typeSize()) {
            for (int f : halves) {
                short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.01));
                b[o + f] = (byte) h;
                b[o + f + 1] = (byte) (h >> 8);
            }
        }
        MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
        QuantizedMatrix file = (QuantizedMatrix) GgmlMatrices.create(t, data, rows, cols);
        QuantizedMatrix copied = (QuantizedMatrix) GgmlMatrices.create(t, data, rows, cols);
        ((WorkingCopy) copied).makeCopy(null);
        float[] dst = new float[cols];
        short[] q = new short[cols];
        float[] sc = new float[cols / 32];
        float[] bi = new float[cols / 32];
        String[] names;
        Runnable[] kernels;
        if (t == GgmlType.Q6_K) {
            Q6_KMatrix f = (Q6_KMatrix) file;
            Q6_KMatrix c = (Q6_KMatrix) copied;
            MemorySegment w = c.workingStorage();
            int blocks = cols / 256;
            names = new String[] {"decodeRow file", "decodeRow copy scalar", "decodeRow copy vector"};
            kernels = new Runnable[] {
                () -> { for (int i = 0; i < rows; i++) f.decodeRowFile(i, dst, 0); },
                () -> { for (int i = 0; i < rows; i++) q6Scalar(w, blocks, i, dst, 0); },
                () -> { for (int i = 0; i < rows; i++) c.decodeRow(i, dst, 0); }};
        } else {
            Q4LanesMatrix f = (Q4LanesMatrix) file;
            Q4LanesMatrix c = (Q4LanesMatrix) copied;
            Q4Lanes l = c.intDecode.lanes(null);
            boolean k = t == GgmlType.Q4_K;
            names = new String[] {"decodeRow file", "decodeRow copy scalar", "decodeRow copy vector",
                "decodeInts file", "decodeInts copy scalar", "decodeInts copy vector"};
            kernels = new Runnable[] {
                () -> { for (int i = 0; i < rows; i++) f.decodeRowFile(i, dst, 0); },
                () -> { for (int i = 0; i < rows; i++) q4RowScalar(l, i, dst, 0); },
                () -> { for (int i = 0; i < rows; i++) c.decodeRow(i, dst, 0); },
                k ? () -> { for (int i = 0; i < rows; i++) ((Q4_KMatrix) f).decodeIntsFile(i, q, 0, sc, bi, 0); }
                  : () -> { for (int i = 0; i < rows; i++) ((Q4_0Matrix) f).decodeShortsFile(i, q, 0, sc, 0); },
                () -> { for (int i = 0; i < rows; i++) q4IntsScalar(l, i, q, 0, sc, k ? bi : null, 0); },
                () -> { for (int i = 0; i < rows; i++) c.decodeInts(i, q, 0, sc, bi, 0); }};
        }
        var mx = ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 200; i++) {
            for (Runnable k : kernels) k.run();
        }
        double[] best = new double[kernels.length];
        java.util.Arrays.fill(best, Double.MAX_VALUE);
        StringBuilder[] all = new StringBuilder[kernels.length];
        for (int i = 0; i < all.length; i++) all[i] = new StringBuilder();
        for (int rep = 0; rep < 7; rep++) {
            for (int i = 0; i < kernels.length; i++) {
                double ns = nsPerValue(mx, kernels[i], (long) rows * cols);
                best[i] = Math.min(best[i], ns);
                all[i].append(String.format(" %.3f", ns));
            }
        }
        for (int i = 0; i < kernels.length; i++) {
            System.out.printf("%s %dx%d %-24s best %.3f ns/value (%s)%n", t, rows, cols, names[i], best[i], all[i].toString().trim());
        }
    }

    private static double nsPerValue(java.lang.management.ThreadMXBean mx, Runnable k, long values) {
        long c0 = mx.getCurrentThreadCpuTime();
        long n = 0;
        while (mx.getCurrentThreadCpuTime() - c0 < 200_000_000L) {
            for (int i = 0; i < 5; i++) k.run();
            n += 5;
        }
        return (mx.getCurrentThreadCpuTime() - c0) / (double) (n * values);
    }

    /** The first copies' Q4Lanes.decodeRow (scalar), for reference. */
    static void q4RowScalar(Q4Lanes l, int row, float[] dst, int off) {
        int blocks = l.cols / 32;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int G = Q4Lanes.G;
        MemorySegment packed = l.packed;
        long g = row * l.rowBytes;
        for (int b0 = 0; b0 < blocks; b0 += G, g += groupBytes) {
            int w = b0 / G < l.groups ? G : Q4Lanes.H;
            int n = Math.min(w, blocks - b0);
            for (int j = 0; j < n; j++) {
                float a = packed.get(FLOAT, g + 16L * w + 4L * j);
                float c = biased ? packed.get(FLOAT, g + 20L * w + 4L * j) : 0f;
                int e = off + (b0 + j) * 32;
                for (int k = 0; k < 8; k++) {
                    int u = packed.get(SHORT, g + 2L * (k * w + j));
                    int x = e + 4 * k;
                    if (biased) {
                        dst[x] = (u & 0xF) * a - c;
                        dst[x + 1] = (u >>> 4 & 0xF) * a - c;
                        dst[x + 2] = (u >>> 8 & 0xF) * a - c;
                        dst[x + 3] = (u >>> 12 & 0xF) * a - c;
                    } else {
                        dst[x] = ((u & 0xF) - 8) * a;
                        dst[x + 1] = ((u >>> 4 & 0xF) - 8) * a;
                        dst[x + 2] = ((u >>> 8 & 0xF) - 8) * a;
                        dst[x + 3] = ((u >>> 12 & 0xF) - 8) * a;
                    }
                }
            }
        }
    }

    /** The first copies' Q4Lanes.decodeInts (scalar), for reference. */
    static void q4IntsScalar(Q4Lanes l, int row, short[] q, int off, float[] scale, float[] bias, int sOff) {
        int blocks = l.cols / 32;
        int groupBytes = l.format.groupBytes;
        int G = Q4Lanes.G;
        MemorySegment packed = l.packed;
        long g = row * l.rowBytes;
        for (int b0 = 0; b0 < blocks; b0 += G, g += groupBytes) {
            int w = b0 / G < l.groups ? G : Q4Lanes.H;
            int n = Math.min(w, blocks - b0);
            for (int j = 0; j < n; j++) {
                float a = packed.get(FLOAT, g + 16L * w + 4L * j);
                scale[sOff + b0 + j] = a;
                if (bias != null) {
                    bias[sOff + b0 + j] = 8 * a - packed.get(FLOAT, g + 20L * w + 4L * j);
                }
            }
            for (int k = 0; k < 8; k++) {
                long wk = g + 2L * k * w;
                for (int j = 0; j < n; j++) {
                    int u = packed.get(SHORT, wk + 2L * j);
                    int x = off + (b0 + j) * 32 + 4 * k;
                    q[x] = (short) ((u & 0xF) - 8);
                    q[x + 1] = (short) ((u >>> 4 & 0xF) - 8);
                    q[x + 2] = (short) ((u >>> 8 & 0xF) - 8);
                    q[x + 3] = (short) ((u >>> 12 & 0xF) - 8);
                }
            }
        }
    }

    /** The first copies' Q6_KLanes.decodeRow (scalar), for reference. */
    static void q6Scalar(MemorySegment w, int blocks, int row, float[] dst, int off) {
        long base = row * Q6_KLanes.rowBytes(blocks);
        for (int b = 0; b < blocks; b++) {
            long at = base + (long) (b / 2) * Q6_KLanes.PAIR_BYTES;
            boolean tail = b >= 2 * (blocks / 2);
            int width = tail ? 16 : 32;
            int first = tail ? 0 : 16 * (b & 1);
            long scales = at + 16L * width;
            float d = w.get(FLOAT, scales + width + 4L * (first / 16));
            int e = off + b * 256;
            for (int g = 0; g < 16; g++) {
                float ds = d * w.get(ValueLayout.JAVA_BYTE, scales + first + g);
                long q = at + first + g;
                for (int k = 0; k < 16; k++) {
                    dst[e + 16 * g + k] = w.get(ValueLayout.JAVA_BYTE, q + (long) width * k) * ds;
                }
            }
        }
    }
}
