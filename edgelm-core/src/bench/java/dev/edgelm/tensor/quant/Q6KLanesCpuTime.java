package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.B;
import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.I;
import static dev.edgelm.tensor.quant.Simd.L;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

/**
 * Q6_K one-token matvec on one thread: the float file kernel that 16 lanes used before ({@link #dot16}, a copy) against the
 * integer sub-blocks-in-lanes kernel ({@link Q6_KLanes}, activations rounded per call), taking turns in each of
 * seven 0.3 CPU-second rounds. Rows per CPU-second and GB of Q6_K file bytes per CPU-second of the calling thread.
 * Run: {@code java --add-modules jdk.incubator.vector -cp target/benchmarks.jar dev.edgelm.tensor.quant.Q6KLanesCpuTime ROWS COLS}
 * (248320 1024: the 0.8B head streamed from memory; 512 1024: in L2).
 */
public final class Q6KLanesCpuTime {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final int BLOCK_BYTES = 210;
    private static final int BLOCK = 256;

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
        // in huge pages, as a model's weights and the integer copy are
        MemorySegment data = dev.edgelm.format.ModelMemory.workingCopy(b.length, Arena.ofAuto());
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
            long frb = t.byteSize(cols);
            Runnable file = () -> {
                for (int row = 0; row < rows; row++) out[row] = dot16(data, frb, blocks, row, x, 0);
            };
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

    /**
     * The float kernel that Q6_KMatrix used with 16 lanes before the integer kernel (a copy, the baseline). The 16-lane (AVX-512) shape: per super-block four runs of 16 columns (half {@code i >> 1}, columns
     * {@code 16 (i & 1)} of it), a loop. Per run the bytes of {@code qh} and of both {@code ql} runs are widened once
     * and give the four quarters' values by shifts and masks; the 16 group scales are converted once per
     * super-block (times {@code d}) and put in the order the runs take them (run i's four groups in lanes 4i..4i+3,
     * {@link #RUN_ORDER}), each group takes its lane by a constant shuffle and the scales move down four lanes per
     * run. 248,320 x 1024 (a 0.8B head) on two threads, alternating runs: 30.5 ms per product before (a scale
     * picked and converted per 16 values, the bytes re-read per quarter), 15.1 with the shuffles read from an
     * array, 10.4-10.5 with one constant per lane, against 9.2-9.6 ms for the same shape in Q8_0.
     *
     * <p>A loop, not the four runs written out: written out (1,828 bytes of bytecode), C2's compile of it depended on
     * what had run before in the process (the Vector API's shared profiles, docs/lab/kquant-decode.md): in a model
     * that had prefilled first it fell back to the Java implementation of some lane operations (allocating per
     * operation), at a fraction of its speed. The same operations in the same order: the same bits.
     */
    static float dot16(MemorySegment data, long rowBytes, int blocksPerRow, int row, float[] x, int xOff) {
        long base = row * rowBytes;
        FloatVector acc0 = FloatVector.zero(F);
        FloatVector acc1 = FloatVector.zero(F);
        for (int b = 0; b < blocksPerRow; b++) {
            long o = base + (long) b * BLOCK_BYTES;
            FloatVector scales = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, data, o + 192, LE)
                    .convertShape(VectorOperators.B2I, I, 0)).convertShape(VectorOperators.I2F, F, 0))
                    .mul(Simd.fp16(data, o + 208)).rearrange(RUN_ORDER);
            int xi = xOff + b * BLOCK;
            for (int i = 0; i < 4; i++) {
                int h = i >> 1;
                int c = 16 * (i & 1);
                IntVector qh = (IntVector) ByteVector.fromMemorySegment(B, data, o + 128 + 32 * h + c, LE)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector ql0 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 64 * h + c, LE)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                IntVector ql1 = (IntVector) ByteVector.fromMemorySegment(B, data, o + 64 * h + 32 + c, LE)
                        .convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
                int v = xi + 128 * h + c;
                IntVector q0 = ql0.and(0x0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30)).sub(32);
                IntVector q1 = ql1.and(0x0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30)).sub(32);
                IntVector q2 = ql0.lanewise(VectorOperators.LSHR, 4).or(qh.and(0x30)).sub(32);
                IntVector q3 = ql1.lanewise(VectorOperators.LSHR, 4)
                        .or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30)).sub(32);
                acc0 = ((FloatVector) q0.convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, v))
                        .fma(scales.rearrange(LANE0), acc0);
                acc1 = ((FloatVector) q1.convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, v + 32))
                        .fma(scales.rearrange(LANE1), acc1);
                acc0 = ((FloatVector) q2.convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, v + 64))
                        .fma(scales.rearrange(LANE2), acc0);
                acc1 = ((FloatVector) q3.convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, v + 96))
                        .fma(scales.rearrange(LANE3), acc1);
                scales = scales.rearrange(DOWN4);
            }
        }
        // Simd.sum's steps written out (same order, same bits): C2 does not inline a call into a method this large
        // (NodeCountInliningCutoff) and would box the vector passed to Simd.sum, an allocation per row
        FloatVector v = acc0.add(acc1);
        v = v.add(v.rearrange(Simd.SWAP8));
        v = v.add(v.rearrange(Simd.SWAP4));
        v = v.add(v.rearrange(Simd.SWAP2));
        return v.add(v.rearrange(Simd.SWAP1)).lane(0);
    }

    /**
     * The 16 group scales in the order {@link #dot16}'s runs take them: run i (half i >> 1, columns 16 (i & 1)..)
     * scales its quarters by groups 8h + (i & 1), + 2, + 4, + 6, here in lanes 4i..4i+3.
     */
    private static final VectorShuffle<Float> RUN_ORDER = L < 16 ? null : VectorShuffle.fromArray(F,
            new int[] {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}, 0);
    /** Lane i takes lane i + 4 (the next run's scales to lanes 0..3). */
    private static final VectorShuffle<Float> DOWN4 = VectorShuffle.fromOp(F, i -> (i + 4) % F.length());

    // Shuffles that broadcast lane j of a 16-lane vector, one constant each: C2 folds a constant shuffle into
    // one permute, but not one read from an array (15.1 against 10.4 ms above).
    private static final VectorShuffle<Float> LANE0 = lane(0);
    private static final VectorShuffle<Float> LANE1 = lane(1);
    private static final VectorShuffle<Float> LANE2 = lane(2);
    private static final VectorShuffle<Float> LANE3 = lane(3);

    private static VectorShuffle<Float> lane(int j) {
        int[] index = new int[F.length()];
        java.util.Arrays.fill(index, Math.min(j, F.length() - 1));
        return VectorShuffle.fromArray(F, index, 0);
    }
}
