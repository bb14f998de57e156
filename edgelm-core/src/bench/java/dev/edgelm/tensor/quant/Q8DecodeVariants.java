package dev.edgelm.tensor.quant;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Stand-alone copies of the one-token Q8_0 product ({@code Q8_0Matrix.dot16}) and variants of it that keep its
 * bits (each output lane sees the same operations in the same order), measured alternating in one JVM on random
 * blocks in huge pages: one thread in GB of matrix bytes per CPU-second, and {@code threads} through the pool in
 * GB/s of wall time; every variant's outputs are checked against the base's bit for bit. Run (after
 * {@code bin/mvn -B -Pbench -pl edgelm-core package -DskipTests}):
 * {@code java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp edgelm-core/target/benchmarks.jar
 * dev.edgelm.tensor.quant.Q8DecodeVariants ROWS COLS THREADS ROUNDS VARIANT...}. Variants (the same bits as base unless
 * marked): base, h256 (256-bit vectors), sum256 (lane sums through the halves), rows2 / rows4 (rows per pass),
 * rows2s, lidx (a long induction variable), xseg / xseg16 (activations in a native segment, 64-byte aligned or
 * 16 bytes off), xoff ({@code -Dxoff=N}: activations from element N of a heap array), tile (rows in tiles of
 * {@code -Dtile.rows}, columns in chunks of {@code -Dtile.blocks}), tilecopy (the same over a copy whose tiles are
 * laid out chunk by chunk); timing only, wrong results: noscale (a constant scale), xsmall ({@code -Dxs=N}: the
 * activations of N blocks reused along the row), read (a bare read loop, no product). Findings:
 * docs/lab/decode-bandwidth.md, the Zen 4 section.
 */
public final class Q8DecodeVariants {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    private static final VectorSpecies<Byte> B64 = ByteVector.SPECIES_512;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final VectorShuffle<Float> SWAP8 = VectorShuffle.fromOp(F, i -> i ^ 8);
    private static final VectorShuffle<Float> SWAP4 = VectorShuffle.fromOp(F, i -> i ^ 4);
    private static final VectorShuffle<Float> SWAP2 = VectorShuffle.fromOp(F, i -> i ^ 2);
    private static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);
    private static final VectorShuffle<Float> S4 = VectorShuffle.fromOp(F8, i -> i ^ 4);
    private static final VectorShuffle<Float> S2 = VectorShuffle.fromOp(F8, i -> i ^ 2);
    private static final VectorShuffle<Float> S1 = VectorShuffle.fromOp(F8, i -> i ^ 1);
    private static final int BB = 34;

    static volatile long sink;
    static MemorySegment TILED;
    static final int TR = Integer.getInteger("tile.rows", 4);
    static final int XS = Integer.getInteger("xs", 32);
    static final int TK = Integer.getInteger("tile.blocks", 32);
    static final int XOFF = Integer.getInteger("xoff", 0);
    static float[] XO;
    static MemorySegment XSEG;
    static MemorySegment XSEG16;

    public static void main(String[] a) throws Exception {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        int threads = Integer.parseInt(a[2]);
        int rounds = Integer.parseInt(a[3]);
        String[] vs = java.util.Arrays.copyOfRange(a, 4, a.length);
        int blocks = cols / 32;
        long rowBytes = (long) blocks * BB;
        long size = rows * rowBytes;
        Arena arena = Arena.ofAuto();
        MemorySegment data = ModelMemory.workingCopy(size, arena);
        Random r = new Random(1);
        byte[] chunk = new byte[1 << 20];
        for (long o = 0; o < size; o += chunk.length) {
            r.nextBytes(chunk);
            MemorySegment.copy(MemorySegment.ofArray(chunk), 0, data, o, Math.min(chunk.length, size - o));
        }
        for (long o = 0; o < size; o += BB) {
            data.set(LE_SHORT, o, Float.floatToFloat16((float) (r.nextGaussian() * 0.001)));
        }
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) r.nextGaussian();
        }
        XSEG = Arena.ofAuto().allocate(4L * cols, 64);
        MemorySegment.copy(x, 0, XSEG, ValueLayout.JAVA_FLOAT, 0, cols);
        XSEG16 = Arena.ofAuto().allocate(4L * cols + 64, 64).asSlice(16, 4L * cols);
        MemorySegment.copy(x, 0, XSEG16, ValueLayout.JAVA_FLOAT, 0, cols);
        XO = new float[cols + 16];
        System.arraycopy(x, 0, XO, XOFF, cols);
        if (java.util.Arrays.asList(vs).contains("tilecopy")) {
            // rows in tiles of TR, each tile's bytes chunk-major: chunk c of row j at tile + c * TR * TK * 34 + j * TK * 34
            TILED = ModelMemory.workingCopy(size, arena);
            for (int t0 = 0; t0 + TR <= rows; t0 += TR) {
                long tile = t0 * rowBytes;
                for (int c = 0; c < blocks; c += TK) {
                    int k = Math.min(TK, blocks - c);
                    for (int j = 0; j < TR; j++) {
                        MemorySegment.copy(data, (t0 + j) * rowBytes + (long) c * BB, TILED,
                                tile + (long) c * TR * BB + (long) j * k * BB, (long) k * BB);
                    }
                }
            }
            MemorySegment.copy(data, rows / TR * TR * rowBytes, TILED, rows / TR * TR * rowBytes, (rows % TR) * rowBytes);
        }
        float[] ref = new float[rows];
        float[] out = new float[rows];
        range("base", data, rowBytes, blocks, x, ref, 0, rows);
        for (String v : vs) {
            java.util.Arrays.fill(out, Float.NaN);
            for (int w = 0; w < 3; w++) {
                range(v, data, rowBytes, blocks, x, out, 0, rows);
            }
            if (!v.equals("read") && !v.equals("noscale") && !v.equals("xsmall")) {
                for (int i = 0; i < rows; i++) {
                    if (Float.floatToRawIntBits(out[i]) != Float.floatToRawIntBits(ref[i])) {
                        throw new AssertionError(v + " row " + i + ": " + out[i] + " != " + ref[i]);
                    }
                }
            }
        }
        var mx = ManagementFactory.getThreadMXBean();
        // warm up
        try (Parallel pool = new Parallel(threads)) {
            for (int w = 0; w < 2; w++) {
                for (String v : vs) {
                    long t0 = System.nanoTime();
                    while (System.nanoTime() - t0 < 300_000_000L) {
                        range(v, data, rowBytes, blocks, x, out, 0, rows);
                        pool.forRange(rows, 2, (long) rows * cols, (s, e) -> range(v, data, rowBytes, blocks, x, out, s, e));
                    }
                }
            }
            StringBuilder[] one = new StringBuilder[vs.length];
            StringBuilder[] many = new StringBuilder[vs.length];
            for (int i = 0; i < vs.length; i++) {
                one[i] = new StringBuilder();
                many[i] = new StringBuilder();
            }
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < vs.length; i++) {
                    String v = vs[i];
                    double best = 0;
                    for (int rep = 0; rep < 3; rep++) {
                        long c0 = mx.getCurrentThreadCpuTime();
                        int n = 0;
                        while (mx.getCurrentThreadCpuTime() - c0 < 100_000_000L) {
                            range(v, data, rowBytes, blocks, x, out, 0, rows);
                            n++;
                        }
                        double s = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                        best = Math.max(best, n * (double) size / s * 1e-9);
                    }
                    one[i].append(String.format(" %.1f", best));
                    best = 0;
                    for (int rep = 0; rep < 3; rep++) {
                        long t0 = System.nanoTime();
                        int n = 0;
                        while (System.nanoTime() - t0 < 100_000_000L) {
                            pool.forRange(rows, 2, (long) rows * cols, (s, e) -> range(v, data, rowBytes, blocks, x, out, s, e));
                            n++;
                        }
                        double s = (System.nanoTime() - t0) * 1e-9;
                        best = Math.max(best, n * (double) size / s * 1e-9);
                    }
                    many[i].append(String.format(" %.1f", best));
                }
            }
            for (int i = 0; i < vs.length; i++) {
                System.out.printf("%dx%d %-10s 1 thread GB/cpu-s:%s | %d threads GB/s:%s%n", rows, cols, vs[i], one[i], threads, many[i]);
            }
        }
    }

    static void range(String v, MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        switch (v) {
            case "base" -> baseRange(d, rb, nb, x, out, s, e);
            case "h256" -> h256Range(d, rb, nb, x, out, s, e);
            case "sum256" -> sum256Range(d, rb, nb, x, out, s, e);
            case "rows2" -> rows2Range(d, rb, nb, x, out, s, e);
            case "rows2h256" -> rows2h256Range(d, rb, nb, x, out, s, e);
            case "rows4" -> rows4Range(d, rb, nb, x, out, s, e);
            case "rows2s" -> rows2sRange(d, rb, nb, x, out, s, e);
            case "lidx" -> lidxRange(d, rb, nb, x, out, s, e);
            case "noscale" -> noscaleRange(d, rb, nb, x, out, s, e);
            case "xseg" -> xsegRange(d, rb, nb, XSEG, out, s, e);
            case "xseg16" -> xsegRange(d, rb, nb, XSEG16, out, s, e);
            case "xoff" -> xoffRange(d, rb, nb, XO, out, s, e);
            case "tile" -> tileRange(d, rb, nb, x, out, s, e);
            case "xsmall" -> xsmallRange(d, rb, nb, x, out, s, e);
            case "tilecopy" -> tilecopyRange(TILED, rb, nb, x, out, s, e);
            case "read" -> readRange(d, rb, s, e);
            default -> throw new IllegalArgumentException(v);
        }
    }

    static void baseRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = base(d, r * rb, nb, x);
    }

    static void h256Range(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = h256(d, r * rb, nb, x);
    }

    static void sum256Range(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = sum256(d, r * rb, nb, x);
    }

    static void rows2Range(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        int r = s;
        for (; r + 1 < e; r += 2) rows2(d, r * rb, rb, nb, x, out, r);
        for (; r < e; r++) out[r] = base(d, r * rb, nb, x);
    }

    static void rows2h256Range(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        int r = s;
        for (; r + 1 < e; r += 2) rows2h256(d, r * rb, rb, nb, x, out, r);
        for (; r < e; r++) out[r] = h256(d, r * rb, nb, x);
    }

    static void rows4Range(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        int r = s;
        for (; r + 3 < e; r += 4) rows4(d, r * rb, rb, nb, x, out, r);
        for (; r < e; r++) out[r] = base(d, r * rb, nb, x);
    }

    static void rows2sRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        int r = s;
        for (; r + 1 < e; r += 2) rows2s(d, r * rb, rb, nb, x, out, r);
        for (; r < e; r++) out[r] = sum256(d, r * rb, nb, x);
    }

    static void lidxRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = lidx(d, r * rb, rb, x);
    }

    /** As base, the loop's induction variable the segment offset (a long), the activation index following it. */
    static float lidx(MemorySegment data, long base, long rb, float[] x) {
        FloatVector acc = FloatVector.zero(F);
        int xi = 0;
        for (long o = base, end = base + rb; o < end; o += BB, xi += 32) {
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        return sum16(acc);
    }

    /** rows2 with sum256's lane sums. */
    static void rows2s(MemorySegment data, long base, long rb, int nb, float[] x, float[] out, int r) {
        FloatVector acc = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            long o2 = o + rb;
            int xi = b * 32;
            FloatVector xl = FloatVector.fromArray(F, x, xi);
            FloatVector xh = FloatVector.fromArray(F, x, xi + 16);
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector lo2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(xh, lo.mul(xl));
            FloatVector s2 = hi2.fma(xh, lo2.mul(xl));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
            acc2 = s2.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o2))), acc2);
        }
        out[r] = sum8(((FloatVector) acc.reinterpretShape(F8, 0)).add((FloatVector) acc.reinterpretShape(F8, 1)));
        out[r + 1] = sum8(((FloatVector) acc2.reinterpretShape(F8, 0)).add((FloatVector) acc2.reinterpretShape(F8, 1)));
    }

    /** Four rows per pass, each in base's order. */
    static void rows4(MemorySegment data, long base, long rb, int nb, float[] x, float[] out, int r) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F);
        FloatVector a3 = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector xl = FloatVector.fromArray(F, x, xi);
            FloatVector xh = FloatVector.fromArray(F, x, xi + 16);
            FloatVector l0 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector h0 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            a0 = h0.fma(xh, l0.mul(xl)).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), a0);
            long o1 = o + rb;
            FloatVector l1 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o1 + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector h1 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o1 + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            a1 = h1.fma(xh, l1.mul(xl)).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o1))), a1);
            long o2 = o1 + rb;
            FloatVector l2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector h2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            a2 = h2.fma(xh, l2.mul(xl)).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o2))), a2);
            long o3 = o2 + rb;
            FloatVector l3 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o3 + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector h3 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o3 + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            a3 = h3.fma(xh, l3.mul(xl)).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o3))), a3);
        }
        out[r] = sum16(a0);
        out[r + 1] = sum16(a1);
        out[r + 2] = sum16(a2);
        out[r + 3] = sum16(a3);
    }

    static void noscaleRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = noscale(d, r * rb, nb, x);
    }

    /** Timing only (wrong results): base with a constant scale, the cost of the fp16 scale's path. */
    static float noscale(MemorySegment data, long base, int nb, float[] x) {
        FloatVector acc = FloatVector.zero(F);
        FloatVector d = FloatVector.broadcast(F, x[3]);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(d, acc);
        }
        return sum16(acc);
    }

    static void xsegRange(MemorySegment d, long rb, int nb, MemorySegment x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = xseg(d, r * rb, nb, x);
    }

    /** As base, the activations read from a native segment (64-byte aligned for XSEG: no load splits a line). */
    static float xseg(MemorySegment data, long base, int nb, MemorySegment x) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            long xi = (long) b * 128;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromMemorySegment(F, x, xi + 64, LE), lo.mul(FloatVector.fromMemorySegment(F, x, xi, LE)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        return sum16(acc);
    }

    static void xoffRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = xoff(d, r * rb, nb, x, XOFF);
    }

    /** As base, the activations from {@code x[xOff..]} ({@code -Dxoff=N}): where the vector loads fall against 64-byte lines. */
    static float xoff(MemorySegment data, long base, int nb, float[] x, int xOff) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = xOff + b * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        return sum16(acc);
    }

    /**
     * Rows in tiles of {@code TR}, columns in chunks of {@code TK} blocks: for each chunk, each row of the tile continues
     * its own accumulator (kept in memory between chunks, so each row's additions are base's, in base's order) over
     * the chunk's blocks, so that the chunk's activations stay in L1 for the tile's rows.
     */
    static void tileRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        float[] acc = new float[16 * TR];
        int r = s;
        for (; r + TR <= e; r += TR) {
            java.util.Arrays.fill(acc, 0f);
            for (int b0 = 0; b0 < nb; b0 += TK) {
                int b1 = Math.min(nb, b0 + TK);
                for (int t = 0; t < TR; t++) {
                    chunk(d, (r + t) * rb, b0, b1, x, acc, 16 * t);
                }
            }
            for (int t = 0; t < TR; t++) {
                out[r + t] = sum16(FloatVector.fromArray(F, acc, 16 * t));
            }
        }
        for (; r < e; r++) out[r] = base(d, r * rb, nb, x);
    }

    /** Blocks b0..b1 of the row whose block b sits at {@code base + b * 34}, continuing the accumulator at {@code accs[ao..]}. */
    static void chunk(MemorySegment data, long base, int b0, int b1, float[] x, float[] accs, int ao) {
        FloatVector acc = FloatVector.fromArray(F, accs, ao);
        for (int b = b0; b < b1; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        acc.intoArray(accs, ao);
    }

    /** tileRange over {@link #TILED}: each tile's chunks laid out one after the other, so the pass reads one forward stream. */
    static void tilecopyRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        float[] acc = new float[16 * TR];
        int r = s;
        for (; r + TR <= e && r % TR == 0; r += TR) {
            java.util.Arrays.fill(acc, 0f);
            long tile = r * rb;
            for (int b0 = 0; b0 < nb; b0 += TK) {
                int k = Math.min(TK, nb - b0);
                for (int t = 0; t < TR; t++) {
                    chunk(d, tile + (long) b0 * TR * BB + (long) t * k * BB - (long) b0 * BB, b0, b0 + k, x, acc, 16 * t);
                }
            }
            for (int t = 0; t < TR; t++) {
                out[r + t] = sum16(FloatVector.fromArray(F, acc, 16 * t));
            }
        }
        for (; r < e; r++) out[r] = base(d, r * rb, nb, x);
    }

    static void xsmallRange(MemorySegment d, long rb, int nb, float[] x, float[] out, int s, int e) {
        for (int r = s; r < e; r++) out[r] = xsmall(d, r * rb, nb, x);
    }

    /** Timing only (wrong results): base with the activations of blocks b and b % XS the same, a footprint of XS blocks. */
    static float xsmall(MemorySegment data, long base, int nb, float[] x) {
        FloatVector acc = FloatVector.zero(F);
        int xs = XS;
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = (b % xs) * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        return sum16(acc);
    }

    static void readRange(MemorySegment d, long rb, int s, int e) {
        long from = s * rb;
        long to = e * rb;
        ByteVector a0 = ByteVector.zero(B64);
        ByteVector a1 = ByteVector.zero(B64);
        long o = from;
        for (; o + 128 <= to; o += 128) {
            a0 = a0.or(ByteVector.fromMemorySegment(B64, d, o, LE));
            a1 = a1.or(ByteVector.fromMemorySegment(B64, d, o + 64, LE));
        }
        sink += a0.or(a1).reduceLanes(VectorOperators.OR);
    }

    static float sum16(FloatVector v) {
        v = v.add(v.rearrange(SWAP8));
        v = v.add(v.rearrange(SWAP4));
        v = v.add(v.rearrange(SWAP2));
        return v.add(v.rearrange(SWAP1)).lane(0);
    }

    static float sum8(FloatVector v) {
        v = v.add(v.rearrange(S4));
        v = v.add(v.rearrange(S2));
        return v.add(v.rearrange(S1)).lane(0);
    }

    /** Q8_0Matrix.dot16 as it is. */
    static float base(MemorySegment data, long base, int nb, float[] x) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        return sum16(acc);
    }

    /** As base, the lane sum through the two 256-bit halves (same additions). */
    static float sum256(MemorySegment data, long base, int nb, float[] x) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(FloatVector.fromArray(F, x, xi + 16), lo.mul(FloatVector.fromArray(F, x, xi)));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
        }
        FloatVector a0 = (FloatVector) acc.reinterpretShape(F8, 0);
        FloatVector a1 = (FloatVector) acc.reinterpretShape(F8, 1);
        return sum8(a0.add(a1));
    }

    /** 256-bit vectors: lanes 0-7 of base's accumulator in one, 8-15 in the other. */
    static float h256(MemorySegment data, long base, int nb, float[] x) {
        FloatVector a0 = FloatVector.zero(F8);
        FloatVector a1 = FloatVector.zero(F8);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            int xi = b * 32;
            FloatVector d = FloatVector.broadcast(F8, Float.float16ToFloat(data.get(LE_SHORT, o)));
            FloatVector l0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 2, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector l1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 10, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector h0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 18, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector h1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 26, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector s0 = h0.fma(FloatVector.fromArray(F8, x, xi + 16), l0.mul(FloatVector.fromArray(F8, x, xi)));
            FloatVector s1 = h1.fma(FloatVector.fromArray(F8, x, xi + 24), l1.mul(FloatVector.fromArray(F8, x, xi + 8)));
            a0 = s0.fma(d, a0);
            a1 = s1.fma(d, a1);
        }
        return sum8(a0.add(a1));
    }

    /** Two rows per pass, each in base's order, the activation loads shared. */
    static void rows2(MemorySegment data, long base, long rb, int nb, float[] x, float[] out, int r) {
        FloatVector acc = FloatVector.zero(F);
        FloatVector acc2 = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            long o2 = o + rb;
            int xi = b * 32;
            FloatVector xl = FloatVector.fromArray(F, x, xi);
            FloatVector xh = FloatVector.fromArray(F, x, xi + 16);
            FloatVector lo = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi = (FloatVector) ByteVector.fromMemorySegment(B16, data, o + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector lo2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 2, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector hi2 = (FloatVector) ByteVector.fromMemorySegment(B16, data, o2 + 18, LE).convertShape(VectorOperators.B2F, F, 0);
            FloatVector s = hi.fma(xh, lo.mul(xl));
            FloatVector s2 = hi2.fma(xh, lo2.mul(xl));
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o))), acc);
            acc2 = s2.fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(LE_SHORT, o2))), acc2);
        }
        out[r] = sum16(acc);
        out[r + 1] = sum16(acc2);
    }

    /** Two rows per pass at 256 bits. */
    static void rows2h256(MemorySegment data, long base, long rb, int nb, float[] x, float[] out, int r) {
        FloatVector a0 = FloatVector.zero(F8);
        FloatVector a1 = FloatVector.zero(F8);
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = FloatVector.zero(F8);
        for (int b = 0; b < nb; b++) {
            long o = base + (long) b * BB;
            long o2 = o + rb;
            int xi = b * 32;
            FloatVector x0 = FloatVector.fromArray(F8, x, xi);
            FloatVector x1 = FloatVector.fromArray(F8, x, xi + 8);
            FloatVector x2 = FloatVector.fromArray(F8, x, xi + 16);
            FloatVector x3 = FloatVector.fromArray(F8, x, xi + 24);
            FloatVector d = FloatVector.broadcast(F8, Float.float16ToFloat(data.get(LE_SHORT, o)));
            FloatVector l0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 2, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector l1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 10, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector h0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 18, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector h1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o + 26, LE).convertShape(VectorOperators.B2F, F8, 0);
            a0 = h0.fma(x2, l0.mul(x0)).fma(d, a0);
            a1 = h1.fma(x3, l1.mul(x1)).fma(d, a1);
            FloatVector d2 = FloatVector.broadcast(F8, Float.float16ToFloat(data.get(LE_SHORT, o2)));
            FloatVector m0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o2 + 2, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector m1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o2 + 10, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector g0 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o2 + 18, LE).convertShape(VectorOperators.B2F, F8, 0);
            FloatVector g1 = (FloatVector) ByteVector.fromMemorySegment(B8, data, o2 + 26, LE).convertShape(VectorOperators.B2F, F8, 0);
            c0 = g0.fma(x2, m0.mul(x0)).fma(d2, c0);
            c1 = g1.fma(x3, m1.mul(x1)).fma(d2, c1);
        }
        out[r] = sum8(a0.add(a1));
        out[r + 1] = sum8(c0.add(c1));
    }
}
