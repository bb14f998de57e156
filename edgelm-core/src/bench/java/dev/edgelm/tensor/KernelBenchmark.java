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
 * Prefill kernels at Qwen3.5-0.8B shapes: the chunk GEMM per weight type (an MLP gate/up matrix,
 * 3584 x 1024, against 64 tokens), one token of the delta rule over all 16 value heads of a layer, and
 * attention of 8 query heads over 256 cached positions. Figures: ops/s; GFLOP/s = ops/s x the flops
 * in each method's comment.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
@State(Scope.Benchmark)
public class KernelBenchmark {
    private static final int ROWS = 3584;
    private static final int COLS = 1024;
    private static final int TOKENS = 64;

    @Param({"BF16", "Q8_0", "Q4_0"})
    public String type;

    @Param({"1", "2"})
    public int threads;

    private Arena arena;
    private Parallel pool;
    private WeightMatrix matrix;
    private float[] x;
    private float[] out;
    /** Rows padded by one cache line, as the model keeps them (see SequenceState). */
    private static final int STATE_STRIDE = 128 + 16;
    private float[] state;
    private float[] qkv;
    private float[] core;
    private float[] keys;
    private float[] values;
    private float[] scores;

    @Setup(Level.Trial)
    public void setUp() {
        SplittableRandom r = new SplittableRandom(1);
        arena = Arena.ofShared();
        pool = new Parallel(threads);
        float[] w = new float[ROWS * COLS];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (r.nextGaussian() * 0.02);
        }
        GgmlType t = GgmlType.valueOf(type);
        MemorySegment seg = arena.allocate(t.byteSize((long) ROWS * COLS), 64);
        switch (type) {
            case "Q8_0" -> Q8_0Matrix.quantize(w, 0, w.length, seg, 0);
            case "Q4_0" -> Q4_0Matrix.quantize(w, 0, w.length, seg, 0);
            default -> {
                for (int i = 0; i < w.length; i++) {
                    seg.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * i,
                            (short) (Float.floatToRawIntBits(w[i]) >>> 16));
                }
            }
        }
        matrix = GgmlMatrices.create(t, seg, ROWS, COLS);
        x = new float[TOKENS * COLS];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian();
        }
        out = new float[TOKENS * ROWS];
        state = new float[16 * 128 * STATE_STRIDE];
        qkv = new float[3 * 16 * 128];
        for (int i = 0; i < qkv.length; i++) {
            qkv[i] = (float) (r.nextGaussian() * 0.1);
        }
        core = new float[16 * 128];
        keys = new float[256 * 2 * 256];
        values = new float[256 * 2 * 256];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (float) r.nextGaussian();
            values[i] = (float) r.nextGaussian();
        }
        scores = new float[4 * 256]; // a group of four heads
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        arena.close();
    }

    /** 2 x 3584 x 1024 x 64 = 470 MFLOP per call. */
    @Benchmark
    public float[] gemm() {
        matrix.matmul(pool, x, TOKENS, out);
        return out;
    }

    private static final float[] GATES = {0.97f, 0.96f, 0.95f, 0.94f, 0.93f, 0.92f, 0.91f, 0.9f,
            0.89f, 0.88f, 0.87f, 0.86f, 0.85f, 0.84f, 0.83f, 0.82f};

    /** One token of a layer's 16 value heads: one row of everything. */
    private static final DeltaRule.Layout DELTA = new DeltaRule.Layout(128, 128, STATE_STRIDE, 0, 0, 0);

    /** 16 heads x 4 x 128 x 128 = 1.05 MFLOP per call (type and threads do not apply). */
    @Benchmark
    public float[] deltaRuleToken() {
        for (int h = 0; h < 16; h++) {
            DeltaRule.scan(DELTA, 1, state, qkv, GATES, GATES, core,
                    new DeltaRule.Head(h * 128 * STATE_STRIDE, h * 128, 2048 + h * 128, 4096 + h * 128, h, h * 128));
        }
        return core;
    }

    /** 8 heads x 4 x 256 x 256 = 2.1 MFLOP per call (type and threads do not apply). */
    @Benchmark
    public float[] attention256() {
        for (int h = 0; h < 8; h++) {
            CausalAttention.attend(qkv, h * 256, keys, values, 512, (h / 4) * 256, 256, 256, 0.0625f, scores, core, 0);
        }
        return core;
    }

    /** The 0.8B's two groups of four query heads (the q projection interleaves each head with its gate). */
    private static final CausalAttention.GroupLayout GROUPS = new CausalAttention.GroupLayout(4, 256, 512, 512, 0.0625f);

    /**
     * {@link #attention256} as the model runs it, a group of four query heads per KV head: 8 heads x 4 x 256 x
     * 256 = 2.1 MFLOP per call (type and threads do not apply).
     */
    @Benchmark
    public float[] attentionGroups256() {
        for (int kv = 0; kv < 2; kv++) {
            CausalAttention.attendGroup(GROUPS, qkv, kv * 4 * 512, keys, values, kv * 256, 256, scores, core, kv * 4 * 256);
        }
        return core;
    }
}
