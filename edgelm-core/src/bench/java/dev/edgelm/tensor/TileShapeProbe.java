package dev.edgelm.tensor;

import java.lang.management.ManagementFactory;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Float outer-product tile shapes (rows x token vectors, one broadcast weight per row and column, one FMA per
 * row and token vector) on the calling thread, in GFLOP per CPU-second: which shape keeps the FMA pipes busy;
 * and beside them {@code Q4_0Gemm.tile}'s bare 16-bit loop (8 rows x 32 short lanes, a multiply and an add per row
 * and column, no scaling), shape {@code i8x32}.
 * {@code java --add-modules jdk.incubator.vector -cp edgelm-core/target/benchmarks.jar dev.edgelm.tensor.TileShapeProbe [COLS]}.
 */
public final class TileShapeProbe {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;

    public static void main(String[] a) {
        int cols = a.length > 0 ? Integer.parseInt(a[0]) : 1024;
        var mx = ManagementFactory.getThreadMXBean();
        float[] w = new float[12 * cols];
        float[] x = new float[cols * 8 * 16];
        for (int i = 0; i < w.length; i++) w[i] = (i % 7) * 0.01f;
        for (int i = 0; i < x.length; i++) x[i] = (i % 5) * 0.01f;
        float[] out = new float[12 * 8 * 16];
        int[][] shapes = {{12,2},{8,2},{6,4},{4,4},{5,4},{3,8}};
        short[] wq = new short[8 * cols];
        short[] xq = new short[cols * 32];
        for (int i = 0; i < wq.length; i++) wq[i] = (short) (i % 15 - 8);
        for (int i = 0; i < xq.length; i++) xq[i] = (short) (i % 255 - 127);
        short[] outq = new short[8 * 32];
        for (int rep = 0; rep < 4; rep++) {
            StringBuilder sb = new StringBuilder();
            for (int[] s : shapes) {
                long c0 = mx.getCurrentThreadCpuTime();
                long n = 0;
                while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                    for (int i = 0; i < 20; i++) {
                        run(s[0], s[1], w, x, cols, out);
                    }
                    n += 20;
                }
                double sec = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
                double g = n * 2.0 * s[0] * s[1] * 16 * cols / sec * 1e-9;
                sb.append(String.format(" %dx%d %.1f", s[0], s[1] * 16, g));
            }
            long c0 = mx.getCurrentThreadCpuTime();
            long n = 0;
            while (mx.getCurrentThreadCpuTime() - c0 < 300_000_000L) {
                for (int i = 0; i < 20; i++) {
                    i8x32(wq, xq, cols, outq);
                }
                n += 20;
            }
            double sec = (mx.getCurrentThreadCpuTime() - c0) * 1e-9;
            sb.append(String.format(" i8x32 %.1f", n * 2.0 * 8 * 32 * cols / sec * 1e-9));
            System.out.println((rep == 0 ? "warm-up" : "round " + rep) + ":" + sb + "  (" + out[3] + ")");
        }
    }

    static void run(int r, int v, float[] w, float[] x, int cols, float[] out) {
        switch (r * 100 + v) {
            case 1202 -> t12x2(w, x, cols, out);
            case 802 -> t8x2(w, x, cols, out);
            case 604 -> t6x4(w, x, cols, out);
            case 404 -> t4x4(w, x, cols, out);
            case 504 -> t5x4(w, x, cols, out);
            case 308 -> t3x8(w, x, cols, out);
            default -> throw new IllegalArgumentException();
        }
    }

    static void t12x2(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F);
        FloatVector a3_0 = FloatVector.zero(F), a3_1 = FloatVector.zero(F);
        FloatVector a4_0 = FloatVector.zero(F), a4_1 = FloatVector.zero(F);
        FloatVector a5_0 = FloatVector.zero(F), a5_1 = FloatVector.zero(F);
        FloatVector a6_0 = FloatVector.zero(F), a6_1 = FloatVector.zero(F);
        FloatVector a7_0 = FloatVector.zero(F), a7_1 = FloatVector.zero(F);
        FloatVector a8_0 = FloatVector.zero(F), a8_1 = FloatVector.zero(F);
        FloatVector a9_0 = FloatVector.zero(F), a9_1 = FloatVector.zero(F);
        FloatVector a10_0 = FloatVector.zero(F), a10_1 = FloatVector.zero(F);
        FloatVector a11_0 = FloatVector.zero(F), a11_1 = FloatVector.zero(F);
        int xs = 32;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            b = FloatVector.broadcast(F, w[3 * cols + k]);
            a3_0 = x0.fma(b, a3_0);
            a3_1 = x1.fma(b, a3_1);
            b = FloatVector.broadcast(F, w[4 * cols + k]);
            a4_0 = x0.fma(b, a4_0);
            a4_1 = x1.fma(b, a4_1);
            b = FloatVector.broadcast(F, w[5 * cols + k]);
            a5_0 = x0.fma(b, a5_0);
            a5_1 = x1.fma(b, a5_1);
            b = FloatVector.broadcast(F, w[6 * cols + k]);
            a6_0 = x0.fma(b, a6_0);
            a6_1 = x1.fma(b, a6_1);
            b = FloatVector.broadcast(F, w[7 * cols + k]);
            a7_0 = x0.fma(b, a7_0);
            a7_1 = x1.fma(b, a7_1);
            b = FloatVector.broadcast(F, w[8 * cols + k]);
            a8_0 = x0.fma(b, a8_0);
            a8_1 = x1.fma(b, a8_1);
            b = FloatVector.broadcast(F, w[9 * cols + k]);
            a9_0 = x0.fma(b, a9_0);
            a9_1 = x1.fma(b, a9_1);
            b = FloatVector.broadcast(F, w[10 * cols + k]);
            a10_0 = x0.fma(b, a10_0);
            a10_1 = x1.fma(b, a10_1);
            b = FloatVector.broadcast(F, w[11 * cols + k]);
            a11_0 = x0.fma(b, a11_0);
            a11_1 = x1.fma(b, a11_1);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a1_0.intoArray(out, 32);
        a1_1.intoArray(out, 48);
        a2_0.intoArray(out, 64);
        a2_1.intoArray(out, 80);
        a3_0.intoArray(out, 96);
        a3_1.intoArray(out, 112);
        a4_0.intoArray(out, 128);
        a4_1.intoArray(out, 144);
        a5_0.intoArray(out, 160);
        a5_1.intoArray(out, 176);
        a6_0.intoArray(out, 192);
        a6_1.intoArray(out, 208);
        a7_0.intoArray(out, 224);
        a7_1.intoArray(out, 240);
        a8_0.intoArray(out, 256);
        a8_1.intoArray(out, 272);
        a9_0.intoArray(out, 288);
        a9_1.intoArray(out, 304);
        a10_0.intoArray(out, 320);
        a10_1.intoArray(out, 336);
        a11_0.intoArray(out, 352);
        a11_1.intoArray(out, 368);
    }
    static void t8x2(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F);
        FloatVector a3_0 = FloatVector.zero(F), a3_1 = FloatVector.zero(F);
        FloatVector a4_0 = FloatVector.zero(F), a4_1 = FloatVector.zero(F);
        FloatVector a5_0 = FloatVector.zero(F), a5_1 = FloatVector.zero(F);
        FloatVector a6_0 = FloatVector.zero(F), a6_1 = FloatVector.zero(F);
        FloatVector a7_0 = FloatVector.zero(F), a7_1 = FloatVector.zero(F);
        int xs = 32;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            b = FloatVector.broadcast(F, w[3 * cols + k]);
            a3_0 = x0.fma(b, a3_0);
            a3_1 = x1.fma(b, a3_1);
            b = FloatVector.broadcast(F, w[4 * cols + k]);
            a4_0 = x0.fma(b, a4_0);
            a4_1 = x1.fma(b, a4_1);
            b = FloatVector.broadcast(F, w[5 * cols + k]);
            a5_0 = x0.fma(b, a5_0);
            a5_1 = x1.fma(b, a5_1);
            b = FloatVector.broadcast(F, w[6 * cols + k]);
            a6_0 = x0.fma(b, a6_0);
            a6_1 = x1.fma(b, a6_1);
            b = FloatVector.broadcast(F, w[7 * cols + k]);
            a7_0 = x0.fma(b, a7_0);
            a7_1 = x1.fma(b, a7_1);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a1_0.intoArray(out, 32);
        a1_1.intoArray(out, 48);
        a2_0.intoArray(out, 64);
        a2_1.intoArray(out, 80);
        a3_0.intoArray(out, 96);
        a3_1.intoArray(out, 112);
        a4_0.intoArray(out, 128);
        a4_1.intoArray(out, 144);
        a5_0.intoArray(out, 160);
        a5_1.intoArray(out, 176);
        a6_0.intoArray(out, 192);
        a6_1.intoArray(out, 208);
        a7_0.intoArray(out, 224);
        a7_1.intoArray(out, 240);
    }
    static void t6x4(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F), a0_2 = FloatVector.zero(F), a0_3 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F), a1_2 = FloatVector.zero(F), a1_3 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F), a2_2 = FloatVector.zero(F), a2_3 = FloatVector.zero(F);
        FloatVector a3_0 = FloatVector.zero(F), a3_1 = FloatVector.zero(F), a3_2 = FloatVector.zero(F), a3_3 = FloatVector.zero(F);
        FloatVector a4_0 = FloatVector.zero(F), a4_1 = FloatVector.zero(F), a4_2 = FloatVector.zero(F), a4_3 = FloatVector.zero(F);
        FloatVector a5_0 = FloatVector.zero(F), a5_1 = FloatVector.zero(F), a5_2 = FloatVector.zero(F), a5_3 = FloatVector.zero(F);
        int xs = 64;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector x2 = FloatVector.fromArray(F, x, o + 32);
            FloatVector x3 = FloatVector.fromArray(F, x, o + 48);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            a0_2 = x2.fma(b, a0_2);
            a0_3 = x3.fma(b, a0_3);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            a1_2 = x2.fma(b, a1_2);
            a1_3 = x3.fma(b, a1_3);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            a2_2 = x2.fma(b, a2_2);
            a2_3 = x3.fma(b, a2_3);
            b = FloatVector.broadcast(F, w[3 * cols + k]);
            a3_0 = x0.fma(b, a3_0);
            a3_1 = x1.fma(b, a3_1);
            a3_2 = x2.fma(b, a3_2);
            a3_3 = x3.fma(b, a3_3);
            b = FloatVector.broadcast(F, w[4 * cols + k]);
            a4_0 = x0.fma(b, a4_0);
            a4_1 = x1.fma(b, a4_1);
            a4_2 = x2.fma(b, a4_2);
            a4_3 = x3.fma(b, a4_3);
            b = FloatVector.broadcast(F, w[5 * cols + k]);
            a5_0 = x0.fma(b, a5_0);
            a5_1 = x1.fma(b, a5_1);
            a5_2 = x2.fma(b, a5_2);
            a5_3 = x3.fma(b, a5_3);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a0_2.intoArray(out, 32);
        a0_3.intoArray(out, 48);
        a1_0.intoArray(out, 64);
        a1_1.intoArray(out, 80);
        a1_2.intoArray(out, 96);
        a1_3.intoArray(out, 112);
        a2_0.intoArray(out, 128);
        a2_1.intoArray(out, 144);
        a2_2.intoArray(out, 160);
        a2_3.intoArray(out, 176);
        a3_0.intoArray(out, 192);
        a3_1.intoArray(out, 208);
        a3_2.intoArray(out, 224);
        a3_3.intoArray(out, 240);
        a4_0.intoArray(out, 256);
        a4_1.intoArray(out, 272);
        a4_2.intoArray(out, 288);
        a4_3.intoArray(out, 304);
        a5_0.intoArray(out, 320);
        a5_1.intoArray(out, 336);
        a5_2.intoArray(out, 352);
        a5_3.intoArray(out, 368);
    }
    static void t4x4(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F), a0_2 = FloatVector.zero(F), a0_3 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F), a1_2 = FloatVector.zero(F), a1_3 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F), a2_2 = FloatVector.zero(F), a2_3 = FloatVector.zero(F);
        FloatVector a3_0 = FloatVector.zero(F), a3_1 = FloatVector.zero(F), a3_2 = FloatVector.zero(F), a3_3 = FloatVector.zero(F);
        int xs = 64;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector x2 = FloatVector.fromArray(F, x, o + 32);
            FloatVector x3 = FloatVector.fromArray(F, x, o + 48);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            a0_2 = x2.fma(b, a0_2);
            a0_3 = x3.fma(b, a0_3);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            a1_2 = x2.fma(b, a1_2);
            a1_3 = x3.fma(b, a1_3);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            a2_2 = x2.fma(b, a2_2);
            a2_3 = x3.fma(b, a2_3);
            b = FloatVector.broadcast(F, w[3 * cols + k]);
            a3_0 = x0.fma(b, a3_0);
            a3_1 = x1.fma(b, a3_1);
            a3_2 = x2.fma(b, a3_2);
            a3_3 = x3.fma(b, a3_3);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a0_2.intoArray(out, 32);
        a0_3.intoArray(out, 48);
        a1_0.intoArray(out, 64);
        a1_1.intoArray(out, 80);
        a1_2.intoArray(out, 96);
        a1_3.intoArray(out, 112);
        a2_0.intoArray(out, 128);
        a2_1.intoArray(out, 144);
        a2_2.intoArray(out, 160);
        a2_3.intoArray(out, 176);
        a3_0.intoArray(out, 192);
        a3_1.intoArray(out, 208);
        a3_2.intoArray(out, 224);
        a3_3.intoArray(out, 240);
    }
    static void t5x4(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F), a0_2 = FloatVector.zero(F), a0_3 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F), a1_2 = FloatVector.zero(F), a1_3 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F), a2_2 = FloatVector.zero(F), a2_3 = FloatVector.zero(F);
        FloatVector a3_0 = FloatVector.zero(F), a3_1 = FloatVector.zero(F), a3_2 = FloatVector.zero(F), a3_3 = FloatVector.zero(F);
        FloatVector a4_0 = FloatVector.zero(F), a4_1 = FloatVector.zero(F), a4_2 = FloatVector.zero(F), a4_3 = FloatVector.zero(F);
        int xs = 64;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector x2 = FloatVector.fromArray(F, x, o + 32);
            FloatVector x3 = FloatVector.fromArray(F, x, o + 48);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            a0_2 = x2.fma(b, a0_2);
            a0_3 = x3.fma(b, a0_3);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            a1_2 = x2.fma(b, a1_2);
            a1_3 = x3.fma(b, a1_3);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            a2_2 = x2.fma(b, a2_2);
            a2_3 = x3.fma(b, a2_3);
            b = FloatVector.broadcast(F, w[3 * cols + k]);
            a3_0 = x0.fma(b, a3_0);
            a3_1 = x1.fma(b, a3_1);
            a3_2 = x2.fma(b, a3_2);
            a3_3 = x3.fma(b, a3_3);
            b = FloatVector.broadcast(F, w[4 * cols + k]);
            a4_0 = x0.fma(b, a4_0);
            a4_1 = x1.fma(b, a4_1);
            a4_2 = x2.fma(b, a4_2);
            a4_3 = x3.fma(b, a4_3);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a0_2.intoArray(out, 32);
        a0_3.intoArray(out, 48);
        a1_0.intoArray(out, 64);
        a1_1.intoArray(out, 80);
        a1_2.intoArray(out, 96);
        a1_3.intoArray(out, 112);
        a2_0.intoArray(out, 128);
        a2_1.intoArray(out, 144);
        a2_2.intoArray(out, 160);
        a2_3.intoArray(out, 176);
        a3_0.intoArray(out, 192);
        a3_1.intoArray(out, 208);
        a3_2.intoArray(out, 224);
        a3_3.intoArray(out, 240);
        a4_0.intoArray(out, 256);
        a4_1.intoArray(out, 272);
        a4_2.intoArray(out, 288);
        a4_3.intoArray(out, 304);
    }
    static void t3x8(float[] w, float[] x, int cols, float[] out) {
        FloatVector a0_0 = FloatVector.zero(F), a0_1 = FloatVector.zero(F), a0_2 = FloatVector.zero(F), a0_3 = FloatVector.zero(F), a0_4 = FloatVector.zero(F), a0_5 = FloatVector.zero(F), a0_6 = FloatVector.zero(F), a0_7 = FloatVector.zero(F);
        FloatVector a1_0 = FloatVector.zero(F), a1_1 = FloatVector.zero(F), a1_2 = FloatVector.zero(F), a1_3 = FloatVector.zero(F), a1_4 = FloatVector.zero(F), a1_5 = FloatVector.zero(F), a1_6 = FloatVector.zero(F), a1_7 = FloatVector.zero(F);
        FloatVector a2_0 = FloatVector.zero(F), a2_1 = FloatVector.zero(F), a2_2 = FloatVector.zero(F), a2_3 = FloatVector.zero(F), a2_4 = FloatVector.zero(F), a2_5 = FloatVector.zero(F), a2_6 = FloatVector.zero(F), a2_7 = FloatVector.zero(F);
        int xs = 128;
        for (int k = 0; k < cols; k++) {
            int o = k * xs;
            FloatVector x0 = FloatVector.fromArray(F, x, o + 0);
            FloatVector x1 = FloatVector.fromArray(F, x, o + 16);
            FloatVector x2 = FloatVector.fromArray(F, x, o + 32);
            FloatVector x3 = FloatVector.fromArray(F, x, o + 48);
            FloatVector x4 = FloatVector.fromArray(F, x, o + 64);
            FloatVector x5 = FloatVector.fromArray(F, x, o + 80);
            FloatVector x6 = FloatVector.fromArray(F, x, o + 96);
            FloatVector x7 = FloatVector.fromArray(F, x, o + 112);
            FloatVector b;
            b = FloatVector.broadcast(F, w[0 * cols + k]);
            a0_0 = x0.fma(b, a0_0);
            a0_1 = x1.fma(b, a0_1);
            a0_2 = x2.fma(b, a0_2);
            a0_3 = x3.fma(b, a0_3);
            a0_4 = x4.fma(b, a0_4);
            a0_5 = x5.fma(b, a0_5);
            a0_6 = x6.fma(b, a0_6);
            a0_7 = x7.fma(b, a0_7);
            b = FloatVector.broadcast(F, w[1 * cols + k]);
            a1_0 = x0.fma(b, a1_0);
            a1_1 = x1.fma(b, a1_1);
            a1_2 = x2.fma(b, a1_2);
            a1_3 = x3.fma(b, a1_3);
            a1_4 = x4.fma(b, a1_4);
            a1_5 = x5.fma(b, a1_5);
            a1_6 = x6.fma(b, a1_6);
            a1_7 = x7.fma(b, a1_7);
            b = FloatVector.broadcast(F, w[2 * cols + k]);
            a2_0 = x0.fma(b, a2_0);
            a2_1 = x1.fma(b, a2_1);
            a2_2 = x2.fma(b, a2_2);
            a2_3 = x3.fma(b, a2_3);
            a2_4 = x4.fma(b, a2_4);
            a2_5 = x5.fma(b, a2_5);
            a2_6 = x6.fma(b, a2_6);
            a2_7 = x7.fma(b, a2_7);
        }
        a0_0.intoArray(out, 0);
        a0_1.intoArray(out, 16);
        a0_2.intoArray(out, 32);
        a0_3.intoArray(out, 48);
        a0_4.intoArray(out, 64);
        a0_5.intoArray(out, 80);
        a0_6.intoArray(out, 96);
        a0_7.intoArray(out, 112);
        a1_0.intoArray(out, 128);
        a1_1.intoArray(out, 144);
        a1_2.intoArray(out, 160);
        a1_3.intoArray(out, 176);
        a1_4.intoArray(out, 192);
        a1_5.intoArray(out, 208);
        a1_6.intoArray(out, 224);
        a1_7.intoArray(out, 240);
        a2_0.intoArray(out, 256);
        a2_1.intoArray(out, 272);
        a2_2.intoArray(out, 288);
        a2_3.intoArray(out, 304);
        a2_4.intoArray(out, 320);
        a2_5.intoArray(out, 336);
        a2_6.intoArray(out, 352);
        a2_7.intoArray(out, 368);
    }
    static void i8x32(short[] w, short[] x, int cols, short[] out) {
        ShortVector s0 = ShortVector.zero(S), s1 = ShortVector.zero(S), s2 = ShortVector.zero(S), s3 = ShortVector.zero(S), s4 = ShortVector.zero(S), s5 = ShortVector.zero(S), s6 = ShortVector.zero(S), s7 = ShortVector.zero(S);
        for (int k = 0; k < cols; k++) {
            ShortVector v = ShortVector.fromArray(S, x, k * 32);
            s0 = s0.add(v.mul(w[0 * cols + k]));
            s1 = s1.add(v.mul(w[1 * cols + k]));
            s2 = s2.add(v.mul(w[2 * cols + k]));
            s3 = s3.add(v.mul(w[3 * cols + k]));
            s4 = s4.add(v.mul(w[4 * cols + k]));
            s5 = s5.add(v.mul(w[5 * cols + k]));
            s6 = s6.add(v.mul(w[6 * cols + k]));
            s7 = s7.add(v.mul(w[7 * cols + k]));
        }
        s0.intoArray(out, 0);
        s1.intoArray(out, 32);
        s2.intoArray(out, 64);
        s3.intoArray(out, 96);
        s4.intoArray(out, 128);
        s5.intoArray(out, 160);
        s6.intoArray(out, 192);
        s7.intoArray(out, 224);
    }
}
