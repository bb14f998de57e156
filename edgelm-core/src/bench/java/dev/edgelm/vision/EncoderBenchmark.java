package dev.edgelm.vision;

import dev.edgelm.tensor.BF16Matrix;
import dev.edgelm.tensor.BidirectionalAttention;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The vision tower on one image at a released size, random BF16 weights (as the checkpoints store them):
 * {@code side} x {@code side} pixels give (side/16)^2 patches and a quarter as many tokens (512: 1024 patches,
 * 256 tokens). Score: seconds per image.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "-Xmx4g"})
@State(Scope.Benchmark)
public class EncoderBenchmark {
    /** Released vision sizes: 0.8b = 12 blocks x 768 (12 heads, MLP 3072, output 1024); 2b = 24 x 1024 (16, 4096, 2048). */
    @Param({"0.8b"})
    public String size;

    @Param({"512"})
    public int side;

    @Param({"2"})
    public int threads;

    private Parallel pool;
    private VisionEncoder encoder;
    private float[] pixels;
    private List<PatchGrid> grids;
    private int patches;
    private float[] qkv;
    private float[] core;
    private BidirectionalAttention.Layout layout;

    @Setup
    public void setUp() {
        VisionConfig c = switch (size) {
            case "0.8b" -> new VisionConfig(12, 768, 12, 3072, 16, 2, 2, 48, 1024, 1e-6f);
            case "2b" -> new VisionConfig(24, 1024, 16, 4096, 16, 2, 2, 48, 2048, 1e-6f);
            default -> throw new IllegalArgumentException("size " + size);
        };
        SplittableRandom rnd = new SplittableRandom(7);
        int h = c.hidden();
        VisionWeights.Block[] blocks = new VisionWeights.Block[c.depth()];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = new VisionWeights.Block(norm(h), linear(rnd, 3 * h, h), linear(rnd, h, h), norm(h),
                    linear(rnd, c.intermediate(), h), linear(rnd, h, c.intermediate()));
        }
        int merged = 4 * h;
        float[] positions = new float[c.gridSide() * c.gridSide() * h];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = (float) rnd.nextGaussian() * 0.02f;
        }
        VisionWeights w = new VisionWeights(linear(rnd, h, c.patchDim()), positions, blocks, norm(h),
                linear(rnd, merged, merged), linear(rnd, c.outHidden(), merged));
        pool = new Parallel(threads);
        encoder = new VisionEncoder(c, w, pool);
        int g = side / c.patch();
        grids = List.of(new PatchGrid(1, g, g));
        patches = g * g;
        qkv = new float[patches * 3 * h];
        for (int i = 0; i < qkv.length; i++) {
            qkv[i] = (float) rnd.nextGaussian();
        }
        core = new float[patches * h];
        layout = new BidirectionalAttention.Layout(3 * h, 0, h, 2 * h, c.heads(), c.headDim());
        pixels = new float[g * g * c.patchDim()];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = (float) rnd.nextDouble(-1, 1);
        }
    }

    private static VisionWeights.Linear linear(SplittableRandom rnd, int rows, int cols) {
        MemorySegment seg = MemorySegment.ofArray(new byte[2 * rows * cols]);
        ValueLayout.OfShort le = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        float scale = (float) (1 / Math.sqrt(cols));
        for (long i = 0; i < (long) rows * cols; i++) {
            seg.set(le, 2 * i, (short) (Float.floatToRawIntBits((float) rnd.nextGaussian() * scale) >>> 16));
        }
        WeightMatrix m = new BF16Matrix(seg, rows, cols);
        return new VisionWeights.Linear(m, new float[rows]);
    }

    private static VisionWeights.Norm norm(int n) {
        float[] ones = new float[n];
        java.util.Arrays.fill(ones, 1f);
        return new VisionWeights.Norm(ones, new float[n]);
    }

    /** One image through the whole tower (patch embedding to merger). */
    @Benchmark
    public float[] encodeImage() {
        return encoder.encode(pixels, grids);
    }

    /**
     * The attention of one block alone (all heads, every patch against every patch of the image): 4 n^2 hidden flops,
     * 3.2 GFLOP at 0.8b / 512.
     */
    @Benchmark
    public float[] attentionOfOneBlock() {
        BidirectionalAttention.attend(pool, qkv, layout, 0, patches, 0.125f, core);
        return core;
    }

    @TearDown
    public void tearDown() {
        pool.close();
    }
}
