package dev.edgelm.tensor.quant;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * The batched decode product: one matrix times n independent tokens ({@code each}: every token as a
 * one-token matmul computes it, the row read once for all, Q8_0 four tokens at a time) against the
 * prefill kernel for the same n ({@code tile}: rows decoded to floats, 4 x 4 dot-product tile) and n
 * separate one-token products ({@code separate}). {@code tokens} counts token-rows products per second /
 * rows, i.e. tokens through the whole matrix per second. Matrices are 1024 x 3584 / 3584 x 1024 (L3-sized,
 * a model's layers stream from DRAM). Run: {@code bin/jmh BatchedMatVec -f 1 -wi 2 -i 3 -w 1 -r 1}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class BatchedMatVecBenchmark {
    @Param({"Q8_0", "Q4_0"})
    public String type;

    @Param({"3584x1024"})
    public String shape;

    @Param({"1", "4", "8"})
    public int n;

    @Param({"each", "tile", "separate"})
    public String kernel;

    @Param({"2"})
    public int threads;

    private WeightMatrix matrix;
    private Parallel pool;
    private float[] x;
    private float[] out;
    private final Activations in = new Activations();
    private final Activations one = new Activations();

    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Tokens {
        public double tokens;
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
            case Q8_0 -> Q8_0Matrix.quantize(w, 0, w.length, data, 0);
            case Q4_0 -> Q4_0Matrix.quantize(w, 0, w.length, data, 0);
            default -> throw new IllegalArgumentException(type);
        }
        matrix = GgmlMatrices.create(t, data, rows, cols, "tensor bench");
        pool = new Parallel(threads);
        x = new float[n * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian();
        }
        out = new float[n * rows];
        in.set(x, n, cols).eachToken(kernel.equals("each"));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public float[] product(Tokens counter) {
        if (kernel.equals("separate")) {
            float[] xt = new float[matrix.cols()];
            for (int t = 0; t < n; t++) {
                System.arraycopy(x, t * matrix.cols(), xt, 0, xt.length);
                matrix.matmul(pool, one.set(xt, 1, xt.length), out, matrix.rows() * n, t * matrix.rows());
            }
        } else {
            matrix.matmul(pool, in.set(x, n, matrix.cols()), out);
        }
        counter.tokens += n;
        return out;
    }
}
