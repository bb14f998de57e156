package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One-token matrix-vector product (the decode path) per storage type, at Qwen3.5-sized shapes. The
 * {@code gigabytes} counter is matrix bytes streamed per second (GB/s), the figure to compare with the
 * machine's read bandwidth ({@code decodeRows}: single-threaded row decoding, as prefill does per tile). Run: {@code java -jar target/benchmarks.jar MatVec -f 1 -wi 3 -i 5 -w 1 -r 1}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class MatVecBenchmark {
    @Param({"F32", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    public String type;

    /** rows x cols */
    @Param({"1024x3584", "3584x1024"})
    public String shape;

    @Param({"1", "2"})
    public int threads;

    private WeightMatrix matrix;
    private Parallel pool;
    private float[] x;
    private float[] out;
    private float[] row;

    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Bytes {
        public double gigabytes;
    }

    @Setup(Level.Trial)
    public void setUp() {
        String[] rc = shape.split("x");
        int rows = Integer.parseInt(rc[0]);
        int cols = Integer.parseInt(rc[1]);
        GgmlType t = GgmlType.valueOf(type);
        Random r = new Random(1);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (r.nextGaussian() * 0.02);
        }
        MemorySegment data = Arena.ofAuto().allocate(rows * t.byteSize(cols), 64);
        switch (t) {
            case F32 -> MemorySegment.copy(w, 0, data, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, w.length);
            case BF16 -> {
                for (int i = 0; i < w.length; i++) {
                    data.set(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * i, (short) (Float.floatToIntBits(w[i]) >>> 16));
                }
            }
            case Q8_0 -> Q8_0Matrix.quantize(w, 0, w.length, data, 0);
            case Q4_0 -> Q4_0Matrix.quantize(w, 0, w.length, data, 0);
            default -> randomBlocks(t, data, r);
        }
        matrix = GgmlMatrices.create(t, data, rows, cols, "tensor bench");
        pool = new Parallel(threads);
        x = new float[cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) r.nextGaussian();
        }
        out = new float[rows];
        row = new float[cols];
    }

    /** Random quants with moderate fp16 super-scales (no k-quant quantiser exists here; speed does not care). */
    private static void randomBlocks(GgmlType t, MemorySegment data, Random r) {
        byte[] b = new byte[(int) data.byteSize()];
        r.nextBytes(b);
        int[] halves = switch (t) {
            case Q5_0 -> new int[] {0};
            case Q2_K -> new int[] {80, 82};
            case Q3_K -> new int[] {108};
            case Q6_K -> new int[] {208};
            default -> new int[] {0, 2};
        };
        for (int o = 0; o < b.length; o += t.typeSize()) {
            for (int f : halves) {
                short h = Float.floatToFloat16((float) (r.nextGaussian() * 0.001));
                b[o + f] = (byte) h;
                b[o + f + 1] = (byte) (h >> 8);
            }
        }
        MemorySegment.copy(MemorySegment.ofArray(b), 0, data, 0, b.length);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public float[] matvec(Bytes bytes) {
        matrix.matmul(pool, x, 1, out);
        bytes.gigabytes += matrix.byteSize() * 1e-9;
        return out;
    }

    /** Every row decoded to float32 on the calling thread (the prefill path decodes row tiles this way). */
    @Benchmark
    public float[] decodeRows(Bytes bytes) {
        for (int r = 0; r < matrix.rows(); r++) {
            matrix.decodeRow(r, row, 0);
        }
        bytes.gigabytes += matrix.byteSize() * 1e-9;
        return row;
    }
}
