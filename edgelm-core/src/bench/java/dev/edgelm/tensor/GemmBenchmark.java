package dev.edgelm.tensor;

import dev.edgelm.tensor.quant.GgmlMatrices;
import dev.edgelm.tensor.quant.Q4_0Matrix;
import dev.edgelm.tensor.quant.Q8_0Matrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The chunk GEMM's kernels side by side in one JVM, at shapes the models use ({@code ROWSxCOLSxTOKENS}):
 * vision 0.8B qkv / MLP up / MLP down at 1024 patches (2304x768, 3072x768, 768x3072), 2B MLP (4096x1024,
 * 1024x4096), text prefill of 256 tokens (0.8B MLP 3584x1024 and 1024x3584, 2B 6144x2048).
 *
 * <ul>
 *   <li>{@code tile6}: {@link PackedGemm}, 6 rows x 16 tokens (15 registers: the AVX2 path since this kernel);
 *   <li>{@code panel8}: {@link FloatGemm#panelTile}, 8 rows x 16 tokens (19 registers, spills on AVX2), the text
 *       path before it and still the path with 16-lane vectors.
 * </ul>
 * Score: ms per matmul; GFLOP/s = 2 x rows x cols x tokens / time.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
@State(Scope.Benchmark)
public class GemmBenchmark {
    @Param({"3072x768x1024", "3584x1024x256"})
    public String shape;

    @Param({"F16"})
    public String type;

    @Param({"tile6", "panel8"})
    public String kernel;

    @Param({"1"})
    public int threads;

    private Arena arena;
    private Parallel pool;
    private WeightMatrix matrix;
    private Activations in;
    private float[] out;

    @Setup(Level.Trial)
    public void setUp() {
        String[] p = shape.split("x");
        int rows = Integer.parseInt(p[0]);
        int cols = Integer.parseInt(p[1]);
        int tokens = Integer.parseInt(p[2]);
        SplittableRandom r = new SplittableRandom(1);
        arena = Arena.ofShared();
        pool = new Parallel(threads);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (r.nextGaussian() * 0.02);
        }
        GgmlType t = GgmlType.valueOf(type);
        MemorySegment seg = arena.allocate(t.byteSize((long) rows * cols), 64);
        ValueLayout.OfShort le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        switch (type) {
            case "Q8_0" -> Q8_0Matrix.quantize(w, 0, w.length, seg, 0);
            case "Q4_0" -> Q4_0Matrix.quantize(w, 0, w.length, seg, 0);
            case "F16" -> {
                for (int i = 0; i < w.length; i++) {
                    seg.set(le, 2L * i, Float.floatToFloat16(w[i]));
                }
            }
            case "F32" -> MemorySegment.copy(w, 0, seg, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, w.length);
            default -> {
                for (int i = 0; i < w.length; i++) {
                    seg.set(le, 2L * i, (short) (Float.floatToRawIntBits(w[i]) >>> 16));
                }
            }
        }
        matrix = GgmlMatrices.create(t, seg, rows, cols);
        float[] x = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian();
        }
        in = new Activations().set(x, tokens, cols);
        out = new float[tokens * rows];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        arena.close();
    }

    @Benchmark
    public float[] matmul() {
        int rows = matrix.rows();
        switch (kernel) {
            case "panel8" -> matrix.matmulPanels(pool, in, out, rows, 0);
            case "tile6" -> PackedGemm.multiply(matrix, pool, in, out, rows, 0);
            default -> throw new IllegalArgumentException("kernel " + kernel);
        }
        return out;
    }
}
