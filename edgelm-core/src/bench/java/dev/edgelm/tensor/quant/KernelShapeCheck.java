package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

/**
 * The K-quant decode kernels of one vector shape against their decoded rows summed in double ({@code dotRow}
 * and one-token {@code matmul}, 1, 2, 3 and 7 super-blocks per row), printing any relative error over 2e-6.
 * {@code KernelConsistencyTest} checks the shape of the machine it runs on; this checks the others by forcing
 * one: {@code java --add-modules jdk.incubator.vector -Dedgelm.simd.bits=512 -cp target/benchmarks.jar
 * dev.edgelm.tensor.quant.KernelShapeCheck} (128, 256 or 512; a width the CPU lacks runs in the Vector API's
 * Java fallback: slow, same results).
 */
public final class KernelShapeCheck {
    public static void main(String[] a) {
        System.out.println("species " + jdk.incubator.vector.FloatVector.SPECIES_PREFERRED + " bits prop " + System.getProperty("edgelm.simd.bits"));
        double worst = 0;
        for (GgmlType t : new GgmlType[] {GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K}) {
            for (int blocks : new int[] {1, 2, 3, 7}) {
                int rows = 5, cols = 256 * blocks;
                Random r = new Random(blocks * 31 + t.ordinal());
                byte[] b = new byte[(int) (rows * t.byteSize(cols))];
                r.nextBytes(b);
                int[] halves = t == GgmlType.Q6_K ? new int[] {208} : new int[] {0, 2};
                for (int o = 0; o < b.length; o += t.typeSize()) for (int f : halves) {
                    short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.01));
                    b[o + f] = (byte) h; b[o + f + 1] = (byte) (h >> 8);
                }
                MemorySegment data = Arena.ofAuto().allocate(b.length, 64);
                MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
                WeightMatrix m = GgmlMatrices.create(t, data, rows, cols);
                float[] x = new float[cols + 3];
                for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
                float[] w = new float[cols];
                float[] xs = java.util.Arrays.copyOfRange(x, 3, cols + 3);
                float[] out = new float[rows];
                try (Parallel p = new Parallel(1)) { m.matmul(p, xs, 1, out); }
                for (int row = 0; row < rows; row++) {
                    m.decodeRow(row, w, 0);
                    double dot = 0, mag = 0;
                    for (int i = 0; i < cols; i++) { dot += (double) w[i] * x[3 + i]; mag += Math.abs((double) w[i] * x[3 + i]); }
                    double e1 = Math.abs(m.dotRow(row, x, 3) - dot) / mag, e2 = Math.abs(out[row] - dot) / mag;
                    worst = Math.max(worst, Math.max(e1, e2));
                    if (e1 > 2e-6 || e2 > 2e-6) System.out.println("MISMATCH " + t + " blocks " + blocks + " row " + row + " " + e1 + " " + e2);
                }
            }
        }
        System.out.println("worst relative error " + worst);
    }
}
