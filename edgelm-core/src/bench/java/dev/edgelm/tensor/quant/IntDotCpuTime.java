package dev.edgelm.tensor.quant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Stand-alone experiment: do int8 activations with HotSpot's auto-vectorised 16-bit multiply-add
 * ({@code MulAddS2I} / {@code MulAddVS2VI}, {@code vpmaddwd} on x86) beat the float route of the one-token
 * decode kernels? A matrix of {@code rows x cols} int8 weights (Q8_0 values, random) times one int8 (or
 * float) activation row, per block of 32 an exact integer sum scaled by one float, in products
 * (multiply-adds) per CPU-second of the calling thread, best of seven 0.3 s rounds, every kernel in turn
 * in each round. The kernels:
 * <ul>
 *   <li>{@code fdot8}: the float path of {@code Q8_0Matrix.dot8} (32-bit word load, shifts to the top byte,
 *       int-to-float, FMAs against interleaved float activations), over the Q8_0 blocks in a native segment;
 *   <li>{@code va16}: the Vector API's 16-bit path as far as Q8_0 allows: bytes widened to shorts, 16-bit
 *       multiplies, each product widened to int before it is summed (int8 x int8 products fill 16 bits);
 *   <li>{@code swS}: a scalar loop over the whole row of the shape C2 turns into {@code vpmaddwd},
 *       {@code p[j] = w[2j] * x[2j] + w[2j+1] * x[2j+1]} over {@code short[]} (a repacked int16 copy of the
 *       weights, 2 bytes per weight), into an int array of pair sums, then per block the 16 pair sums
 *       summed and scaled with the Vector API;
 *   <li>{@code swB}: the same over {@code byte[]} weights and activations (1 byte per weight, the values as
 *       they are in a Q8_0 file, scales apart);
 *   <li>{@code swBS}: {@code byte[]} weights against {@code short[]} activations;
 *   <li>{@code swM}: the same with the weights read from a native {@code MemorySegment} of int8 values;
 *   <li>{@code pairsS}: {@code swS}'s pair loop alone, without the per-block scaling (its ceiling);
 *   <li>{@code rowS}: the whole row as one integer reduction, no scales (does the reduction form vectorise?);
 *   <li>{@code redS}, {@code redB}: the per-block reduction form {@code s += w[2j] * x[2j] + w[2j+1] * x[2j+1]}
 *       over the block's 16 pairs ({@code short[]} / {@code byte[]}).
 * </ul>
 * Run (after {@code bin/mvn -B -Pbench package -DskipTests}, or javac of this one file against
 * edgelm-core's classes): {@code java --add-modules jdk.incubator.vector -cp ... dev.edgelm.tensor.quant.IntDotCpuTime
 * ROWS COLS [KERNEL...]}. To see the compiled code: {@code -XX:+UnlockDiagnosticVMOptions
 * -XX:CompileCommand=print,*IntDotCpuTime.swB} (hex without hsdis; objdump it).
 */
public final class IntDotCpuTime {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_256;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final int TOP = 0xFF000000;

    final int rows;
    final int cols;
    final int blocks;
    /** Q8_0 blocks as in a file (fp16 scale, 32 int8). */
    final MemorySegment q8;
    /** The same int8 values without scales, in an array, a native segment and widened to short. */
    final byte[] wb;
    final MemorySegment wm;
    final short[] ws;
    /** Per block: the weight scale times the activation scale. */
    final float[] wd;
    final float[] xd;
    final float[] xf;
    final float[] xi;
    final byte[] xb;
    final short[] xs;
    final int[] pairs;

    IntDotCpuTime(int rows, int cols, Random r) {
        this.rows = rows;
        this.cols = cols;
        this.blocks = cols / 32;
        long n = (long) rows * cols;
        q8 = Arena.ofAuto().allocate((long) rows * blocks * 34, 64);
        wb = new byte[(int) n];
        wm = Arena.ofAuto().allocate(n, 64);
        ws = new short[(int) n];
        wd = new float[rows * blocks];
        for (int i = 0; i < rows * blocks; i++) {
            short h = Float.floatToFloat16((float) (0.001 + 0.001 * r.nextDouble()));
            wd[i] = Float.float16ToFloat(h);
            long o = (long) i * 34;
            q8.set(LE_SHORT, o, h);
            for (int j = 0; j < 32; j++) {
                byte q = (byte) (r.nextInt(255) - 127);
                q8.set(ValueLayout.JAVA_BYTE, o + 2 + j, q);
                wb[i * 32 + j] = q;
                wm.set(ValueLayout.JAVA_BYTE, (long) i * 32 + j, q);
                ws[i * 32 + j] = q;
            }
        }
        xf = new float[cols];
        for (int i = 0; i < cols; i++) xf[i] = (float) r.nextGaussian();
        xi = new float[cols];
        for (int b = 0; b < cols; b += 32) {
            for (int k = 0; k < 4; k++) for (int i = 0; i < 8; i++) xi[b + 8 * k + i] = xf[b + 4 * i + k];
        }
        xd = new float[blocks];
        xb = new byte[cols];
        xs = new short[cols];
        for (int b = 0; b < blocks; b++) {
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(xf[b * 32 + j]));
            float d = Float.float16ToFloat(Float.floatToFloat16(amax / 127));
            xd[b] = d;
            for (int j = 0; j < 32; j++) {
                int q = Math.round(xf[b * 32 + j] / d);
                xb[b * 32 + j] = (byte) q;
                xs[b * 32 + j] = (short) q;
            }
        }
        pairs = new int[cols / 2];
    }

    // ---- float path (Q8_0Matrix.dot8, copied so that the harness measures it in the same process)

    float fdot8(int row) {
        long o = (long) row * blocks * 34;
        FloatVector acc = FloatVector.zero(F);
        for (int e = 0; e < cols; e += 32, o += 34) {
            IntVector w = IntVector.fromMemorySegment(I, q8, o + 2, LE);
            FloatVector q0 = (FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
            FloatVector q1 = (FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q2 = (FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector q3 = (FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0);
            FloatVector s = q0.mul(FloatVector.fromArray(F, xi, e));
            s = q1.fma(FloatVector.fromArray(F, xi, e + 8), s);
            s = q2.fma(FloatVector.fromArray(F, xi, e + 16), s);
            s = q3.fma(FloatVector.fromArray(F, xi, e + 24), s);
            acc = s.fma(FloatVector.broadcast(F, Float.float16ToFloat(q8.get(LE_SHORT, o))), acc);
        }
        return sum8(acc) * 0x1p-24f;
    }

    // ---- Vector API 16-bit products, widened to int before summing

    float va16(int row) {
        long o = (long) row * cols;
        int wb0 = row * blocks;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0, e = 0; b < blocks; b++, e += 32, o += 32) {
            ShortVector w0 = (ShortVector) ByteVector.fromMemorySegment(B128, wm, o, LE).convertShape(VectorOperators.B2S, S, 0);
            ShortVector w1 = (ShortVector) ByteVector.fromMemorySegment(B128, wm, o + 16, LE).convertShape(VectorOperators.B2S, S, 0);
            ShortVector p0 = w0.mul(ShortVector.fromArray(S, xs, e));
            ShortVector p1 = w1.mul(ShortVector.fromArray(S, xs, e + 16));
            IntVector s = ((IntVector) p0.convertShape(VectorOperators.S2I, I, 0))
                    .add((IntVector) p0.convertShape(VectorOperators.S2I, I, 1))
                    .add((IntVector) p1.convertShape(VectorOperators.S2I, I, 0))
                    .add((IntVector) p1.convertShape(VectorOperators.S2I, I, 1));
            acc = ((FloatVector) s.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, wd[wb0 + b] * xd[b]), acc);
        }
        return sum8(acc);
    }

    // ---- superword: whole-row pair sums into int[], then per-block scaling with the Vector API

    float swS(int row) {
        int o = row * cols;
        short[] w = ws;
        short[] x = xs;
        int[] p = pairs;
        for (int j = 0; j < p.length; j++) {
            p[j] = w[o + 2 * j] * x[2 * j] + w[o + 2 * j + 1] * x[2 * j + 1];
        }
        return scalePairs(row);
    }

    float swB(int row) {
        int o = row * cols;
        byte[] w = wb;
        byte[] x = xb;
        int[] p = pairs;
        for (int j = 0; j < p.length; j++) {
            p[j] = w[o + 2 * j] * x[2 * j] + w[o + 2 * j + 1] * x[2 * j + 1];
        }
        return scalePairs(row);
    }

    /** byte[] weights against short[] activations. */
    float swBS(int row) {
        int o = row * cols;
        byte[] w = wb;
        short[] x = xs;
        int[] p = pairs;
        for (int j = 0; j < p.length; j++) {
            p[j] = w[o + 2 * j] * x[2 * j] + w[o + 2 * j + 1] * x[2 * j + 1];
        }
        return scalePairs(row);
    }

    float swM(int row) {
        long o = (long) row * cols;
        MemorySegment w = wm;
        byte[] x = xb;
        int[] p = pairs;
        for (int j = 0; j < p.length; j++) {
            p[j] = w.get(ValueLayout.JAVA_BYTE, o + 2 * j) * x[2 * j] + w.get(ValueLayout.JAVA_BYTE, o + 2 * j + 1) * x[2 * j + 1];
        }
        return scalePairs(row);
    }

    /** swS's pair loop alone (no per-block scaling): the ceiling of the superword loop. */
    float pairsS(int row) {
        int o = row * cols;
        short[] w = ws;
        short[] x = xs;
        int[] p = pairs;
        for (int j = 0; j < p.length; j++) {
            p[j] = w[o + 2 * j] * x[2 * j] + w[o + 2 * j + 1] * x[2 * j + 1];
        }
        return p[row & (p.length - 1)];
    }

    /** The whole row as one integer reduction over short[] (no block scales: only to see whether it vectorises). */
    float rowS(int row) {
        int o = row * cols;
        short[] w = ws;
        short[] x = xs;
        int s = 0;
        for (int j = 0; j < cols / 2; j++) {
            s += w[o + 2 * j] * x[2 * j] + w[o + 2 * j + 1] * x[2 * j + 1];
        }
        return s;
    }

    private float scalePairs(int row) {
        int wb0 = row * blocks;
        int[] p = pairs;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            IntVector s = IntVector.fromArray(I, p, 16 * b).add(IntVector.fromArray(I, p, 16 * b + 8));
            acc = ((FloatVector) s.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, wd[wb0 + b] * xd[b]), acc);
        }
        return sum8(acc);
    }

    // ---- superword: per-block reductions

    float redS(int row) {
        int o = row * cols;
        short[] w = ws;
        short[] x = xs;
        float acc = 0;
        for (int b = 0; b < blocks; b++) {
            int s = 0;
            int ob = o + 32 * b;
            int xb0 = 32 * b;
            for (int j = 0; j < 16; j++) {
                s += w[ob + 2 * j] * x[xb0 + 2 * j] + w[ob + 2 * j + 1] * x[xb0 + 2 * j + 1];
            }
            acc += s * (wd[row * blocks + b] * xd[b]);
        }
        return acc;
    }

    float redB(int row) {
        int o = row * cols;
        byte[] w = wb;
        byte[] x = xb;
        float acc = 0;
        for (int b = 0; b < blocks; b++) {
            int s = 0;
            int ob = o + 32 * b;
            int xb0 = 32 * b;
            for (int j = 0; j < 16; j++) {
                s += w[ob + 2 * j] * x[xb0 + 2 * j] + w[ob + 2 * j + 1] * x[xb0 + 2 * j + 1];
            }
            acc += s * (wd[row * blocks + b] * xd[b]);
        }
        return acc;
    }

    private static float sum8(FloatVector v) {
        float[] a = new float[8];
        v.intoArray(a, 0);
        return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
    }

    /** The exact product of row r in double (integer sums times the float scales), for checking. */
    double exact(int row) {
        double acc = 0;
        for (int b = 0; b < blocks; b++) {
            long s = 0;
            for (int j = 0; j < 32; j++) s += wb[row * cols + 32 * b + j] * xb[32 * b + j];
            acc += s * (double) (wd[row * blocks + b] * xd[b]);
        }
        return acc;
    }

    double floatExact(int row) {
        double acc = 0;
        for (int j = 0; j < cols; j++) acc += (double) wb[row * cols + j] * wd[row * blocks + j / 32] * xf[j];
        return acc;
    }

    float run(String k, int row) {
        return switch (k) {
            case "fdot8" -> fdot8(row);
            case "va16" -> va16(row);
            case "swS" -> swS(row);
            case "swB" -> swB(row);
            case "swM" -> swM(row);
            case "swBS" -> swBS(row);
            case "redS" -> redS(row);
            case "redB" -> redB(row);
            case "pairsS" -> pairsS(row);
            case "rowS" -> rowS(row);
            default -> throw new IllegalArgumentException("unknown kernel " + k);
        };
    }

    public static void main(String[] a) {
        int rows = Integer.parseInt(a[0]);
        int cols = Integer.parseInt(a[1]);
        String[] ks = a.length > 2 ? java.util.Arrays.copyOfRange(a, 2, a.length)
                : new String[] {"fdot8", "va16", "swS", "swB", "swM", "redS", "redB"};
        IntDotCpuTime h = new IntDotCpuTime(rows, cols, new Random(1));
        for (String k : ks) {
            double err = 0;
            for (int r = 0; r < Math.min(rows, 64); r++) {
                if (k.equals("pairsS") || k.equals("rowS")) break;
                double ref = k.equals("fdot8") ? h.floatExact(r) : h.exact(r);
                err = Math.max(err, Math.abs(h.run(k, r) - ref) / (Math.abs(ref) + 1e-3));
            }
            System.out.printf("%s: max relative error against its exact sum %.2g%n", k, err);
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        float[] out = new float[rows];
        for (int warm = 0; warm < 30; warm++) {
            for (String k : ks) for (int r = 0; r < rows; r++) out[r] = h.run(k, r);
        }
        double[] best = new double[ks.length];
        StringBuilder[] all = new StringBuilder[ks.length];
        for (int i = 0; i < ks.length; i++) all[i] = new StringBuilder();
        for (int rep = 0; rep < 7; rep++) {
            for (int i = 0; i < ks.length; i++) {
                long c0 = mx.getCurrentThreadCpuTime();
                long n = 0;
                while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                    for (int r = 0; r < rows; r++) out[r] = h.run(ks[i], r);
                    n++;
                }
                double s = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                double g = n * (double) rows * cols / s * 1e-9;
                best[i] = Math.max(best[i], g);
                all[i].append(String.format(" %.1f", g));
            }
        }
        for (int i = 0; i < ks.length; i++) {
            System.out.printf("%-6s %dx%d: best %.1f G products/cpu-s (%s)%n", ks[i], rows, cols, best[i], all[i].toString().trim());
        }
    }
}
