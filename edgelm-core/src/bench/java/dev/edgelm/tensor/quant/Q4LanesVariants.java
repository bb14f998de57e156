package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.L;

import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Variants of the {@link Q4Lanes} one-token kernel, one thread, GB of file bytes per CPU-second, taking turns in each
 * of seven rounds; each variant checked bit for bit against {@code Q4Lanes.dot} first. Rows without a half-width group
 * only (cols a multiple of 32 * G). Run: {@code java --add-modules jdk.incubator.vector -cp
 * edgelm-core/target/benchmarks.jar dev.edgelm.tensor.quant.Q4LanesVariants ROWS COLS [Q4_0|Q4_K] [VARIANT...]}.
 */
public final class Q4LanesVariants {
    static final VectorSpecies<Short> S = Q4Lanes.S;
    static final int G = Q4Lanes.G;
    static final int BLOCK = 32;
    static final int PARTS = G / L;
    static final int WORD_BYTES = 16 * G;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    interface Kernel { float dot(Q4Lanes l, int row, Q4Lanes.Input in); }

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        GgmlType t = a.length > 2 ? GgmlType.valueOf(a[2]) : GgmlType.Q4_0;
        java.util.List<String> names = new java.util.ArrayList<>();
        for (int i = 3; i < a.length; i++) names.add(a[i]);
        if (names.isEmpty()) names.addAll(java.util.List.of("base", "loopScalar", "loopVec", "unrollScalar", "unrollVec", "unrollVec2acc", "twoRows"));
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
        Q4Lanes.Format format = t == GgmlType.Q4_0 ? Q4Lanes.Format.Q4_0 : Q4Lanes.Format.Q4_K;
        Q4Lanes lanes = Q4Lanes.of(format, data, rows, cols, null);
        // the variants below other than base, dotRows, masked and unmasked assume no half-width group
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        Q4Lanes.Input in = Q4Lanes.Input.allocate(cols);
        long bytes = (long) (rows * t.byteSize(cols));
        float[] ref = new float[rows];
        in.round(x, 0, cols);
        for (int i = 0; i < rows; i++) ref[i] = lanes.dot(i, in);
        Q4Lanes.Input[] ins = {Q4Lanes.Input.allocate(cols), Q4Lanes.Input.allocate(cols), Q4Lanes.Input.allocate(cols), Q4Lanes.Input.allocate(cols)};
        float[] outs4 = new float[4 * rows];
        Runnable[] ks = new Runnable[names.size()];
        float[][] outs = new float[names.size()][rows];
        for (int v = 0; v < ks.length; v++) {
            float[] out = outs[v];
            ks[v] = switch (names.get(v)) {
                case "dotRows" -> () -> { in.round(x, 0, cols); lanes.dotRows(0, rows, in, out, 0); };
                case "each4base" -> () -> { for (Q4Lanes.Input u : ins) u.round(x, 0, cols); for (int i = 0; i < rows; i++) for (int tk = 0; tk < 4; tk++) outs4[tk * rows + i] = lanes.dot(i, ins[tk]); };
                case "each4rows" -> () -> { for (Q4Lanes.Input u : ins) u.round(x, 0, cols); for (int i = 0; i < rows; i += 8) for (int tk = 0; tk < 4; tk++) lanes.dotRows(i, Math.min(rows, i + 8), ins[tk], outs4, tk * rows); };
                case "each4rows32" -> () -> { for (Q4Lanes.Input u : ins) u.round(x, 0, cols); for (int i = 0; i < rows; i += 32) for (int tk = 0; tk < 4; tk++) lanes.dotRows(i, Math.min(rows, i + 32), ins[tk], outs4, tk * rows); };
                case "base" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = lanes.dot(i, in); };
                case "loopScalar" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = loopScalar(lanes, i, in); };
                case "loopVec" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = loopVec(lanes, i, in); };
                case "unrollScalar" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = unrollScalar(lanes, i, in); };
                case "unrollVec" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = unrollVec(lanes, i, in); };
                case "unrollVec2acc" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i++) out[i] = unrollVec2acc(lanes, i, in); };
                case "twoRowsLoop" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i += 2) twoRowsLoop(lanes, i, in, out); };
                case "rowsLoopScalar" -> () -> { in.round(x, 0, cols); rowsLoopScalar(lanes, 0, rows, in, out); };
                case "rowsLoopVec" -> () -> { in.round(x, 0, cols); rowsLoopVec(lanes, 0, rows, in, out); };
                case "rowsUnrollVec" -> () -> { in.round(x, 0, cols); rowsUnrollVec(lanes, 0, rows, in, out); };
                case "rowsUnrollScalar" -> () -> { in.round(x, 0, cols); rowsUnrollScalar(lanes, 0, rows, in, out); };
                case "one1Scalar" -> () -> { in.round(x, 0, cols); one1Scalar(lanes, 0, rows, in, out); };
                case "one1Vec" -> () -> { in.round(x, 0, cols); one1Vec(lanes, 0, rows, in, out); };
                case "one2Scalar" -> () -> { in.round(x, 0, cols); one2Scalar(lanes, 0, rows, in, out); };
                case "rowsLoopTree" -> () -> { in.round(x, 0, cols); rowsLoopTree(lanes, 0, rows, in, out); };
                case "rowsNoAnd" -> () -> { in.round(x, 0, cols); rowsNoAnd(lanes, 0, rows, differenced(in, cols), out); };
                case "dotNoAnd" -> () -> { in.round(x, 0, cols); Q4Lanes.Input y = differenced(in, cols); for (int i = 0; i < rows; i++) out[i] = dotNoAnd(lanes, i, y); };
                case "twoRows" -> () -> { in.round(x, 0, cols); for (int i = 0; i < rows; i += 2) twoRows(lanes, i, in, out); };
                default -> throw new IllegalArgumentException(names.get(v));
            };
        }
        for (int i = 0; i < 300; i++) for (Runnable k : ks) k.run();
        for (int v = 0; v < ks.length; v++) {
            if (names.get(v).startsWith("each4")) {
                // several tokens (the same activation four times) into outs4: every token's row equals the reference
                ks[v].run();
                for (int i = 0; i < 4 * rows; i++) {
                    if (Float.floatToRawIntBits(outs4[i]) != Float.floatToRawIntBits(ref[i % rows])) {
                        throw new AssertionError(names.get(v) + " slot " + i);
                    }
                }
                continue;
            }
            for (int i = 0; i < rows; i++) {
                if (Float.floatToRawIntBits(outs[v][i]) != Float.floatToRawIntBits(ref[i])) {
                    throw new AssertionError(names.get(v) + " row " + i + ": " + outs[v][i] + " != " + ref[i]);
                }
            }
        }
        double[] best = new double[ks.length];
        StringBuilder[] sb = new StringBuilder[ks.length];
        for (int v = 0; v < ks.length; v++) sb[v] = new StringBuilder();
        for (int rep = 0; rep < 7; rep++) {
            for (int v = 0; v < ks.length; v++) {
                double gb = rate(mx, ks[v], bytes);
                best[v] = Math.max(best[v], gb);
                sb[v].append(String.format(" %.1f", gb));
            }
        }
        System.out.printf("%s %dx%d G=%d (GB/cpu-s, best, then the 7 rounds)%n", t, rows, cols, G);
        for (int v = 0; v < ks.length; v++) {
            System.out.printf("  %-14s %5.1f  %.2fx  (%s)%n", names.get(v), best[v], best[v] / best[0], sb[v].toString().trim());
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

    static float loopScalar(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                int e = xo + 4 * k * G;
                s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    static float loopVec(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                int e = xo + 4 * k * G;
                s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e)));
                s = s.add(w.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    static float unrollScalar(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + 2 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 0 * G + 3 * G)));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + 2 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 4 * G + 3 * G)));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + 2 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 8 * G + 3 * G)));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + 2 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 12 * G + 3 * G)));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + 2 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 16 * G + 3 * G)));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + 2 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 20 * G + 3 * G)));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + 2 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 24 * G + 3 * G)));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + 2 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 28 * G + 3 * G)));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    static float unrollVec(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + 2 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 0 * G + 3 * G)));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + 2 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 4 * G + 3 * G)));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + 2 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 8 * G + 3 * G)));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + 2 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 12 * G + 3 * G)));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + 2 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 16 * G + 3 * G)));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + 2 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 20 * G + 3 * G)));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + 2 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 24 * G + 3 * G)));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + 2 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 28 * G + 3 * G)));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    static float unrollVec2acc(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            ShortVector t = ShortVector.zero(S);
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + 2 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 0 * G + 3 * G)));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            t = t.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G)));
            t = t.add(w1.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + G)));
            t = t.add(w1.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + 2 * G)));
            t = t.add(w1.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 4 * G + 3 * G)));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + 2 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 8 * G + 3 * G)));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            t = t.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G)));
            t = t.add(w3.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + G)));
            t = t.add(w3.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + 2 * G)));
            t = t.add(w3.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 12 * G + 3 * G)));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + 2 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 16 * G + 3 * G)));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            t = t.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G)));
            t = t.add(w5.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + G)));
            t = t.add(w5.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + 2 * G)));
            t = t.add(w5.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 20 * G + 3 * G)));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + 2 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 24 * G + 3 * G)));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            t = t.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G)));
            t = t.add(w7.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + G)));
            t = t.add(w7.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + 2 * G)));
            t = t.add(w7.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 28 * G + 3 * G)));
            s = s.add(t);
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    static void twoRows(Q4Lanes l, int row, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        long o1 = o + l.rowBytes;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        FloatVector acc = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes, o1 += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            ShortVector s1 = s;
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            ShortVector w10 = ShortVector.fromMemorySegment(S, m, o1 + 0L * G, LE);
            ShortVector x0_0 = ShortVector.fromArray(S, x, xo + 0 * G);
            ShortVector x0_1 = ShortVector.fromArray(S, x, xo + 0 * G + G);
            ShortVector x0_2 = ShortVector.fromArray(S, x, xo + 0 * G + 2 * G);
            ShortVector x0_3 = ShortVector.fromArray(S, x, xo + 0 * G + 3 * G);
            s = s.add(w0.and((short) 0x0F).mul(x0_0));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x0_1));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x0_2));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c12).mul(x0_3));
            s1 = s1.add(w10.and((short) 0x0F).mul(x0_0));
            s1 = s1.add(w10.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x0_1));
            s1 = s1.add(w10.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x0_2));
            s1 = s1.add(w10.lanewise(VectorOperators.LSHR, c12).mul(x0_3));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            ShortVector w11 = ShortVector.fromMemorySegment(S, m, o1 + 2L * G, LE);
            ShortVector x1_0 = ShortVector.fromArray(S, x, xo + 4 * G);
            ShortVector x1_1 = ShortVector.fromArray(S, x, xo + 4 * G + G);
            ShortVector x1_2 = ShortVector.fromArray(S, x, xo + 4 * G + 2 * G);
            ShortVector x1_3 = ShortVector.fromArray(S, x, xo + 4 * G + 3 * G);
            s = s.add(w1.and((short) 0x0F).mul(x1_0));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x1_1));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x1_2));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c12).mul(x1_3));
            s1 = s1.add(w11.and((short) 0x0F).mul(x1_0));
            s1 = s1.add(w11.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x1_1));
            s1 = s1.add(w11.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x1_2));
            s1 = s1.add(w11.lanewise(VectorOperators.LSHR, c12).mul(x1_3));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            ShortVector w12 = ShortVector.fromMemorySegment(S, m, o1 + 4L * G, LE);
            ShortVector x2_0 = ShortVector.fromArray(S, x, xo + 8 * G);
            ShortVector x2_1 = ShortVector.fromArray(S, x, xo + 8 * G + G);
            ShortVector x2_2 = ShortVector.fromArray(S, x, xo + 8 * G + 2 * G);
            ShortVector x2_3 = ShortVector.fromArray(S, x, xo + 8 * G + 3 * G);
            s = s.add(w2.and((short) 0x0F).mul(x2_0));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x2_1));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x2_2));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c12).mul(x2_3));
            s1 = s1.add(w12.and((short) 0x0F).mul(x2_0));
            s1 = s1.add(w12.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x2_1));
            s1 = s1.add(w12.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x2_2));
            s1 = s1.add(w12.lanewise(VectorOperators.LSHR, c12).mul(x2_3));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            ShortVector w13 = ShortVector.fromMemorySegment(S, m, o1 + 6L * G, LE);
            ShortVector x3_0 = ShortVector.fromArray(S, x, xo + 12 * G);
            ShortVector x3_1 = ShortVector.fromArray(S, x, xo + 12 * G + G);
            ShortVector x3_2 = ShortVector.fromArray(S, x, xo + 12 * G + 2 * G);
            ShortVector x3_3 = ShortVector.fromArray(S, x, xo + 12 * G + 3 * G);
            s = s.add(w3.and((short) 0x0F).mul(x3_0));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x3_1));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x3_2));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c12).mul(x3_3));
            s1 = s1.add(w13.and((short) 0x0F).mul(x3_0));
            s1 = s1.add(w13.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x3_1));
            s1 = s1.add(w13.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x3_2));
            s1 = s1.add(w13.lanewise(VectorOperators.LSHR, c12).mul(x3_3));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            ShortVector w14 = ShortVector.fromMemorySegment(S, m, o1 + 8L * G, LE);
            ShortVector x4_0 = ShortVector.fromArray(S, x, xo + 16 * G);
            ShortVector x4_1 = ShortVector.fromArray(S, x, xo + 16 * G + G);
            ShortVector x4_2 = ShortVector.fromArray(S, x, xo + 16 * G + 2 * G);
            ShortVector x4_3 = ShortVector.fromArray(S, x, xo + 16 * G + 3 * G);
            s = s.add(w4.and((short) 0x0F).mul(x4_0));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x4_1));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x4_2));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c12).mul(x4_3));
            s1 = s1.add(w14.and((short) 0x0F).mul(x4_0));
            s1 = s1.add(w14.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x4_1));
            s1 = s1.add(w14.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x4_2));
            s1 = s1.add(w14.lanewise(VectorOperators.LSHR, c12).mul(x4_3));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            ShortVector w15 = ShortVector.fromMemorySegment(S, m, o1 + 10L * G, LE);
            ShortVector x5_0 = ShortVector.fromArray(S, x, xo + 20 * G);
            ShortVector x5_1 = ShortVector.fromArray(S, x, xo + 20 * G + G);
            ShortVector x5_2 = ShortVector.fromArray(S, x, xo + 20 * G + 2 * G);
            ShortVector x5_3 = ShortVector.fromArray(S, x, xo + 20 * G + 3 * G);
            s = s.add(w5.and((short) 0x0F).mul(x5_0));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x5_1));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x5_2));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c12).mul(x5_3));
            s1 = s1.add(w15.and((short) 0x0F).mul(x5_0));
            s1 = s1.add(w15.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x5_1));
            s1 = s1.add(w15.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x5_2));
            s1 = s1.add(w15.lanewise(VectorOperators.LSHR, c12).mul(x5_3));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            ShortVector w16 = ShortVector.fromMemorySegment(S, m, o1 + 12L * G, LE);
            ShortVector x6_0 = ShortVector.fromArray(S, x, xo + 24 * G);
            ShortVector x6_1 = ShortVector.fromArray(S, x, xo + 24 * G + G);
            ShortVector x6_2 = ShortVector.fromArray(S, x, xo + 24 * G + 2 * G);
            ShortVector x6_3 = ShortVector.fromArray(S, x, xo + 24 * G + 3 * G);
            s = s.add(w6.and((short) 0x0F).mul(x6_0));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x6_1));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x6_2));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c12).mul(x6_3));
            s1 = s1.add(w16.and((short) 0x0F).mul(x6_0));
            s1 = s1.add(w16.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x6_1));
            s1 = s1.add(w16.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x6_2));
            s1 = s1.add(w16.lanewise(VectorOperators.LSHR, c12).mul(x6_3));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            ShortVector w17 = ShortVector.fromMemorySegment(S, m, o1 + 14L * G, LE);
            ShortVector x7_0 = ShortVector.fromArray(S, x, xo + 28 * G);
            ShortVector x7_1 = ShortVector.fromArray(S, x, xo + 28 * G + G);
            ShortVector x7_2 = ShortVector.fromArray(S, x, xo + 28 * G + 2 * G);
            ShortVector x7_3 = ShortVector.fromArray(S, x, xo + 28 * G + 3 * G);
            s = s.add(w7.and((short) 0x0F).mul(x7_0));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x7_1));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x7_2));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c12).mul(x7_3));
            s1 = s1.add(w17.and((short) 0x0F).mul(x7_0));
            s1 = s1.add(w17.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x7_1));
            s1 = s1.add(w17.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x7_2));
            s1 = s1.add(w17.lanewise(VectorOperators.LSHR, c12).mul(x7_3));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s1.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * p * L, LE);
                acc1 = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc1);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * (G + p * L), LE));
                    acc1 = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc1);
                }
            }
        }
        out[row] = Simd.sum(acc);
        out[row + 1] = Simd.sum(acc1);
    }

    static void twoRowsLoop(Q4Lanes l, int row, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        long o1 = o + l.rowBytes;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        FloatVector acc = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes, o1 += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            ShortVector s1 = s;
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                ShortVector v = ShortVector.fromMemorySegment(S, m, o1 + 2L * k * G, LE);
                int e = xo + 4 * k * G;
                ShortVector x0 = ShortVector.fromArray(S, x, e);
                ShortVector x1 = ShortVector.fromArray(S, x, e + G);
                ShortVector x2 = ShortVector.fromArray(S, x, e + 2 * G);
                ShortVector x3 = ShortVector.fromArray(S, x, e + 3 * G);
                s = s.add(w.and((short) 0x0F).mul(x0));
                s1 = s1.add(v.and((short) 0x0F).mul(x0));
                s = s.add(w.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x1));
                s1 = s1.add(v.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(x1));
                s = s.add(w.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x2));
                s1 = s1.add(v.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(x2));
                s = s.add(w.lanewise(VectorOperators.LSHR, c12).mul(x3));
                s1 = s1.add(v.lanewise(VectorOperators.LSHR, c12).mul(x3));
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s1.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * p * L, LE);
                acc1 = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc1);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * (G + p * L), LE));
                    acc1 = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc1);
                }
            }
        }
        out[row] = Simd.sum(acc);
        out[row + 1] = Simd.sum(acc1);
    }

    static void rowsLoopScalar(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                    int e = xo + 4 * k * G;
                    s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
                }
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    static void rowsLoopVec(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                    int e = xo + 4 * k * G;
                    s = s.add(w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
                }
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    static void rowsUnrollVec(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
                s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + 2 * G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 0 * G + 3 * G)));
                ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
                s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + 2 * G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 4 * G + 3 * G)));
                ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
                s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + 2 * G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 8 * G + 3 * G)));
                ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
                s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + 2 * G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 12 * G + 3 * G)));
                ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
                s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + 2 * G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 16 * G + 3 * G)));
                ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
                s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + 2 * G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 20 * G + 3 * G)));
                ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
                s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + 2 * G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 24 * G + 3 * G)));
                ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
                s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + 2 * G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, xo + 28 * G + 3 * G)));
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    static void rowsUnrollScalar(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
                s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 0 * G + 2 * G)));
                s = s.add(w0.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 0 * G + 3 * G)));
                ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
                s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 4 * G + 2 * G)));
                s = s.add(w1.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 4 * G + 3 * G)));
                ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
                s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 8 * G + 2 * G)));
                s = s.add(w2.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 8 * G + 3 * G)));
                ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
                s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 12 * G + 2 * G)));
                s = s.add(w3.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 12 * G + 3 * G)));
                ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
                s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 16 * G + 2 * G)));
                s = s.add(w4.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 16 * G + 3 * G)));
                ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
                s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 20 * G + 2 * G)));
                s = s.add(w5.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 20 * G + 3 * G)));
                ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
                s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 24 * G + 2 * G)));
                s = s.add(w6.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 24 * G + 3 * G)));
                ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
                s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, xo + 28 * G + 2 * G)));
                s = s.add(w7.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, xo + 28 * G + 3 * G)));
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    /** Rows of exactly one group (cols = 32 * G), the rows' loop inside: every activation index a constant. */
    static void one1Scalar(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        ShortVector s0 = ShortVector.fromArray(S, bias, 0);
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            ShortVector s = s0;
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G + G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G + 2 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 0 * G + 3 * G)));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G + G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G + 2 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 4 * G + 3 * G)));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G + G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G + 2 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 8 * G + 3 * G)));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G + G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G + 2 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 12 * G + 3 * G)));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G + G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G + 2 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 16 * G + 3 * G)));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G + G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G + 2 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 20 * G + 3 * G)));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G + G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G + 2 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 24 * G + 3 * G)));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G + G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G + 2 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, 28 * G + 3 * G)));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, p * L), acc);
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    /** Rows of exactly one group (cols = 32 * G), the rows' loop inside: every activation index a constant. */
    static void one1Vec(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        ShortVector c4 = ShortVector.broadcast(S, (short) 4);
        ShortVector c8 = ShortVector.broadcast(S, (short) 8);
        ShortVector c12 = ShortVector.broadcast(S, (short) 12);
        ShortVector s0 = ShortVector.fromArray(S, bias, 0);
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            ShortVector s = s0;
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            s = s.add(w0.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G + G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 0 * G + 2 * G)));
            s = s.add(w0.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 0 * G + 3 * G)));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            s = s.add(w1.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G + G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 4 * G + 2 * G)));
            s = s.add(w1.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 4 * G + 3 * G)));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            s = s.add(w2.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G + G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 8 * G + 2 * G)));
            s = s.add(w2.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 8 * G + 3 * G)));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            s = s.add(w3.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G + G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 12 * G + 2 * G)));
            s = s.add(w3.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 12 * G + 3 * G)));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            s = s.add(w4.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G + G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 16 * G + 2 * G)));
            s = s.add(w4.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 16 * G + 3 * G)));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            s = s.add(w5.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G + G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 20 * G + 2 * G)));
            s = s.add(w5.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 20 * G + 3 * G)));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            s = s.add(w6.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G + G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 24 * G + 2 * G)));
            s = s.add(w6.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 24 * G + 3 * G)));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            s = s.add(w7.and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G + G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, 28 * G + 2 * G)));
            s = s.add(w7.lanewise(VectorOperators.LSHR, c12).mul(ShortVector.fromArray(S, x, 28 * G + 3 * G)));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, p * L), acc);
                }
            }
            out[r] = Simd.sum(acc);
        }
    }

    /** One group per row, two rows per iteration sharing the activation loads (rows even in number). */
    static void one2Scalar(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        ShortVector s0 = ShortVector.fromArray(S, bias, 0);
        for (int r = r0; r < r1; r += 2) {
            long o = r * l.rowBytes;
            long o1 = o + l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            FloatVector acc1 = FloatVector.zero(F);
            ShortVector s = s0;
            ShortVector u = s0;
            ShortVector w0 = ShortVector.fromMemorySegment(S, m, o + 0L * G, LE);
            ShortVector v0 = ShortVector.fromMemorySegment(S, m, o1 + 0L * G, LE);
            ShortVector x00 = ShortVector.fromArray(S, x, 0 * G);
            ShortVector x01 = ShortVector.fromArray(S, x, 0 * G + G);
            ShortVector x02 = ShortVector.fromArray(S, x, 0 * G + 2 * G);
            ShortVector x03 = ShortVector.fromArray(S, x, 0 * G + 3 * G);
            s = s.add(w0.and((short) 0x0F).mul(x00));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x01));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x02));
            s = s.add(w0.lanewise(VectorOperators.LSHR, 12).mul(x03));
            u = u.add(v0.and((short) 0x0F).mul(x00));
            u = u.add(v0.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x01));
            u = u.add(v0.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x02));
            u = u.add(v0.lanewise(VectorOperators.LSHR, 12).mul(x03));
            ShortVector w1 = ShortVector.fromMemorySegment(S, m, o + 2L * G, LE);
            ShortVector v1 = ShortVector.fromMemorySegment(S, m, o1 + 2L * G, LE);
            ShortVector x10 = ShortVector.fromArray(S, x, 4 * G);
            ShortVector x11 = ShortVector.fromArray(S, x, 4 * G + G);
            ShortVector x12 = ShortVector.fromArray(S, x, 4 * G + 2 * G);
            ShortVector x13 = ShortVector.fromArray(S, x, 4 * G + 3 * G);
            s = s.add(w1.and((short) 0x0F).mul(x10));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x11));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x12));
            s = s.add(w1.lanewise(VectorOperators.LSHR, 12).mul(x13));
            u = u.add(v1.and((short) 0x0F).mul(x10));
            u = u.add(v1.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x11));
            u = u.add(v1.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x12));
            u = u.add(v1.lanewise(VectorOperators.LSHR, 12).mul(x13));
            ShortVector w2 = ShortVector.fromMemorySegment(S, m, o + 4L * G, LE);
            ShortVector v2 = ShortVector.fromMemorySegment(S, m, o1 + 4L * G, LE);
            ShortVector x20 = ShortVector.fromArray(S, x, 8 * G);
            ShortVector x21 = ShortVector.fromArray(S, x, 8 * G + G);
            ShortVector x22 = ShortVector.fromArray(S, x, 8 * G + 2 * G);
            ShortVector x23 = ShortVector.fromArray(S, x, 8 * G + 3 * G);
            s = s.add(w2.and((short) 0x0F).mul(x20));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x21));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x22));
            s = s.add(w2.lanewise(VectorOperators.LSHR, 12).mul(x23));
            u = u.add(v2.and((short) 0x0F).mul(x20));
            u = u.add(v2.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x21));
            u = u.add(v2.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x22));
            u = u.add(v2.lanewise(VectorOperators.LSHR, 12).mul(x23));
            ShortVector w3 = ShortVector.fromMemorySegment(S, m, o + 6L * G, LE);
            ShortVector v3 = ShortVector.fromMemorySegment(S, m, o1 + 6L * G, LE);
            ShortVector x30 = ShortVector.fromArray(S, x, 12 * G);
            ShortVector x31 = ShortVector.fromArray(S, x, 12 * G + G);
            ShortVector x32 = ShortVector.fromArray(S, x, 12 * G + 2 * G);
            ShortVector x33 = ShortVector.fromArray(S, x, 12 * G + 3 * G);
            s = s.add(w3.and((short) 0x0F).mul(x30));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x31));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x32));
            s = s.add(w3.lanewise(VectorOperators.LSHR, 12).mul(x33));
            u = u.add(v3.and((short) 0x0F).mul(x30));
            u = u.add(v3.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x31));
            u = u.add(v3.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x32));
            u = u.add(v3.lanewise(VectorOperators.LSHR, 12).mul(x33));
            ShortVector w4 = ShortVector.fromMemorySegment(S, m, o + 8L * G, LE);
            ShortVector v4 = ShortVector.fromMemorySegment(S, m, o1 + 8L * G, LE);
            ShortVector x40 = ShortVector.fromArray(S, x, 16 * G);
            ShortVector x41 = ShortVector.fromArray(S, x, 16 * G + G);
            ShortVector x42 = ShortVector.fromArray(S, x, 16 * G + 2 * G);
            ShortVector x43 = ShortVector.fromArray(S, x, 16 * G + 3 * G);
            s = s.add(w4.and((short) 0x0F).mul(x40));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x41));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x42));
            s = s.add(w4.lanewise(VectorOperators.LSHR, 12).mul(x43));
            u = u.add(v4.and((short) 0x0F).mul(x40));
            u = u.add(v4.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x41));
            u = u.add(v4.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x42));
            u = u.add(v4.lanewise(VectorOperators.LSHR, 12).mul(x43));
            ShortVector w5 = ShortVector.fromMemorySegment(S, m, o + 10L * G, LE);
            ShortVector v5 = ShortVector.fromMemorySegment(S, m, o1 + 10L * G, LE);
            ShortVector x50 = ShortVector.fromArray(S, x, 20 * G);
            ShortVector x51 = ShortVector.fromArray(S, x, 20 * G + G);
            ShortVector x52 = ShortVector.fromArray(S, x, 20 * G + 2 * G);
            ShortVector x53 = ShortVector.fromArray(S, x, 20 * G + 3 * G);
            s = s.add(w5.and((short) 0x0F).mul(x50));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x51));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x52));
            s = s.add(w5.lanewise(VectorOperators.LSHR, 12).mul(x53));
            u = u.add(v5.and((short) 0x0F).mul(x50));
            u = u.add(v5.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x51));
            u = u.add(v5.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x52));
            u = u.add(v5.lanewise(VectorOperators.LSHR, 12).mul(x53));
            ShortVector w6 = ShortVector.fromMemorySegment(S, m, o + 12L * G, LE);
            ShortVector v6 = ShortVector.fromMemorySegment(S, m, o1 + 12L * G, LE);
            ShortVector x60 = ShortVector.fromArray(S, x, 24 * G);
            ShortVector x61 = ShortVector.fromArray(S, x, 24 * G + G);
            ShortVector x62 = ShortVector.fromArray(S, x, 24 * G + 2 * G);
            ShortVector x63 = ShortVector.fromArray(S, x, 24 * G + 3 * G);
            s = s.add(w6.and((short) 0x0F).mul(x60));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x61));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x62));
            s = s.add(w6.lanewise(VectorOperators.LSHR, 12).mul(x63));
            u = u.add(v6.and((short) 0x0F).mul(x60));
            u = u.add(v6.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x61));
            u = u.add(v6.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x62));
            u = u.add(v6.lanewise(VectorOperators.LSHR, 12).mul(x63));
            ShortVector w7 = ShortVector.fromMemorySegment(S, m, o + 14L * G, LE);
            ShortVector v7 = ShortVector.fromMemorySegment(S, m, o1 + 14L * G, LE);
            ShortVector x70 = ShortVector.fromArray(S, x, 28 * G);
            ShortVector x71 = ShortVector.fromArray(S, x, 28 * G + G);
            ShortVector x72 = ShortVector.fromArray(S, x, 28 * G + 2 * G);
            ShortVector x73 = ShortVector.fromArray(S, x, 28 * G + 3 * G);
            s = s.add(w7.and((short) 0x0F).mul(x70));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x71));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x72));
            s = s.add(w7.lanewise(VectorOperators.LSHR, 12).mul(x73));
            u = u.add(v7.and((short) 0x0F).mul(x70));
            u = u.add(v7.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(x71));
            u = u.add(v7.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(x72));
            u = u.add(v7.lanewise(VectorOperators.LSHR, 12).mul(x73));
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, p * L), acc);
                }
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) u.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * p * L, LE);
                acc1 = f.mul(a).fma(FloatVector.fromArray(F, xd, p * L), acc1);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o1 + WORD_BYTES + 4L * (G + p * L), LE));
                    acc1 = b.fma(FloatVector.fromArray(F, xs, p * L), acc1);
                }
            }
            out[r] = Simd.sum(acc);
            out[r + 1] = Simd.sum(acc1);
        }
    }
    static void rowsLoopTree(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                    int e = xo + 4 * k * G;
                    ShortVector p0 = w.and((short) 0x0F).mul(ShortVector.fromArray(S, x, e));
                    ShortVector p1 = w.lanewise(VectorOperators.LSHR, 4).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + G));
                    ShortVector p2 = w.lanewise(VectorOperators.LSHR, 8).and((short) 0x0F).mul(ShortVector.fromArray(S, x, e + 2 * G));
                    ShortVector p3 = w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G));
                    s = s.add(p0.add(p1).add(p2.add(p3)));
                }
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }
    static void rowsNoAnd(Q4Lanes l, int r0, int r1, Q4Lanes.Input in, float[] out) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        int groups = l.groups;
        for (int r = r0; r < r1; r++) {
            long o = r * l.rowBytes;
            FloatVector acc = FloatVector.zero(F);
            for (int g = 0; g < groups; g++, o += groupBytes) {
                int xo = g * BLOCK * G;
                ShortVector s = ShortVector.fromArray(S, bias, g * G);
                for (int k = 0; k < 8; k++) {
                    ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                    int e = xo + 4 * k * G;
                    s = s.add(w.mul(ShortVector.fromArray(S, x, e)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 4).mul(ShortVector.fromArray(S, x, e + G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 8).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                    s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
                }
                for (int p = 0; p < PARTS; p++) {
                    FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                            .convert(VectorOperators.I2F, 0);
                    FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                    acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                    if (biased) {
                        FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                        acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                    }
                }
            }
            out[r] = Simd.sum(acc);
        }
    }
    static float dotNoAnd(Q4Lanes l, int row, Q4Lanes.Input in) {
        short[] x = in.x();
        float[] xd = in.d();
        short[] bias = in.bias();
        float[] xs = in.sums();
        MemorySegment m = l.packed;
        boolean biased = l.format.biased;
        int groupBytes = l.format.groupBytes;
        long o = row * l.rowBytes;
        FloatVector acc = FloatVector.zero(F);
        for (int g = 0; g < l.groups; g++, o += groupBytes) {
            int xo = g * BLOCK * G;
            ShortVector s = ShortVector.fromArray(S, bias, g * G);
            for (int k = 0; k < 8; k++) {
                ShortVector w = ShortVector.fromMemorySegment(S, m, o + 2L * k * G, LE);
                int e = xo + 4 * k * G;
                s = s.add(w.mul(ShortVector.fromArray(S, x, e)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 4).mul(ShortVector.fromArray(S, x, e + G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 8).mul(ShortVector.fromArray(S, x, e + 2 * G)));
                s = s.add(w.lanewise(VectorOperators.LSHR, 12).mul(ShortVector.fromArray(S, x, e + 3 * G)));
            }
            for (int p = 0; p < PARTS; p++) {
                FloatVector f = (FloatVector) ((IntVector) s.convertShape(VectorOperators.S2I, I, p))
                        .convert(VectorOperators.I2F, 0);
                FloatVector a = FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * p * L, LE);
                acc = f.mul(a).fma(FloatVector.fromArray(F, xd, g * G + p * L), acc);
                if (biased) {
                    FloatVector b = a.mul(8f).sub(FloatVector.fromMemorySegment(F, m, o + WORD_BYTES + 4L * (G + p * L), LE));
                    acc = b.fma(FloatVector.fromArray(F, xs, g * G + p * L), acc);
                }
            }
        }
        return Simd.sum(acc);
    }

    /** The activation for the no-mask variants: {@code Input.y} (x differenced within each word) in x's place. */
    static Q4Lanes.Input differenced(Q4Lanes.Input in, int cols) {
        return new Q4Lanes.Input(in.y(), in.d(), in.bias(), in.sums(), in.y());
    }
}
