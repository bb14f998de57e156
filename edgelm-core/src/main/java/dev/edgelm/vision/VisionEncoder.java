package dev.edgelm.vision;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.BidirectionalAttention;
import dev.edgelm.tensor.PackedGemm;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.StageClock;
import dev.edgelm.tensor.VectorMath;
import dev.edgelm.util.EdgeLmException;
import java.util.List;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Qwen3.5's vision tower: pixel patches in, image-token embeddings (the text model's width) out.
 *
 * <pre>
 *   x = patches W_patch^T + b                       the Conv3d as one matmul over flattened patches
 *   x += bilinear(position table, grid)             corner-aligned, in merge-block order
 *   for each block:
 *       x += proj(attention(LN1(x)))                2-D rotary on q, k; every patch sees its own image only
 *       x += fc2(gelu_tanh(fc1(LN2(x))))
 *   tokens = fc2(gelu_erf(fc1(concat 2x2 of LN(x))))
 * </pre>
 *
 * All images of a call go through the matmuls together (rows concatenated); attention runs per image.
 * Scratch arrays are sized per call (linear in the patches); one call at a time.
 */
public final class VisionEncoder {

    /** Observes the intermediates (tests); arrays are [patches, width] and valid only during the call. */
    public interface Trace {
        default void patchEmbedding(float[] x, int patches) {}

        default void positionEmbedding(float[] pos, int patches) {}

        /** Rotary angles per patch: [row angles (headDim/4) | column angles (headDim/4)]. */
        default void rotaryAngles(float[] angles, int patches) {}

        default void block(int index, float[] x, int patches) {}
    }

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();

    private final VisionConfig c;
    private final VisionWeights w;
    private final Parallel pool;
    private final float[] invFreq;

    public VisionEncoder(VisionConfig config, VisionWeights weights, Parallel pool) {
        this.c = config;
        this.w = weights;
        this.pool = pool;
        int quarter = c.headDim() / 4;
        invFreq = new float[quarter];
        for (int j = 0; j < quarter; j++) {
            // theta ** (arange(0, dim, 2) / dim) with dim = headDim / 2, in float32 as the reference
            float exponent = (float) (2 * j) / (c.headDim() / 2);
            invFreq[j] = (float) (1.0 / Math.pow(10000.0, exponent));
        }
    }

    public VisionConfig config() {
        return c;
    }

    /**
     * Encodes the images whose patches are stacked in {@code pixels} [sum of patches, patchDim], in order; returns
     * their token embeddings [sum of tokens, outHidden].
     */
    public float[] encode(float[] pixels, List<PatchGrid> grids) {
        return encode(pixels, grids, null);
    }

    public synchronized float[] encode(float[] pixels, List<PatchGrid> grids, Trace trace) {
        int n = 0;
        for (PatchGrid g : grids) {
            g.check(c.merge());
            n = Math.addExact(n, g.patches());
        }
        int pd = c.patchDim();
        if (grids.isEmpty() || (long) n * pd != pixels.length) {
            throw new EdgeLmException("pixel tensor of " + pixels.length + " values does not hold " + n + " patches of "
                    + pd + " values");
        }
        int h = c.hidden();
        Activations in = new Activations();
        long t0 = StageClock.start();
        float[] x = new float[n * h];
        linear(w.patchEmbed(), in.set(pixels, n, pd), x);
        if (trace != null) {
            trace.patchEmbedding(x, n);
        }
        float[] pos = positionEmbeddings(grids, n);
        if (trace != null) {
            trace.positionEmbedding(pos, n);
        }
        addRows(pos, x, n, h);
        int half = c.headDim() / 2;
        float[] angles = rotaryAngles(grids, n);
        if (trace != null) {
            trace.rotaryAngles(angles, n);
        }
        float[] cos = new float[n * half];
        float[] sin = new float[n * half];
        pool.forRange(n * half, 1, 16L * n * half, (i0, i1) -> {
            for (int i = i0; i < i1; i++) {
                cos[i] = (float) Math.cos(angles[i]);
                sin[i] = (float) Math.sin(angles[i]);
            }
        });

        t0 = lap("vision.embeddings", t0);
        float[] normed = new float[n * h];
        float[] qkv = new float[n * 3 * h];
        float[] core = new float[n * h];
        float[] mixed = new float[n * h];
        float[] up = new float[n * c.intermediate()];
        var layout = new BidirectionalAttention.Layout(3 * h, 0, h, 2 * h, c.heads(), c.headDim());
        float scale = (float) (1.0 / Math.sqrt(c.headDim()));
        for (int b = 0; b < w.blocks().length; b++) {
            VisionWeights.Block block = w.blocks()[b];
            long t = StageClock.start();
            layerNorm(x, n, block.norm1(), normed);
            t = lap("vision.layernorm", t);
            matmul(block.qkv(), in.set(normed, n, h), qkv);
            t = lap("vision.qkv", t);
            biasAndRotate(qkv, block.qkv().bias(), n, cos, sin);
            t = lap("vision.qkv bias, rotary", t);
            int start = 0;
            for (PatchGrid g : grids) {
                BidirectionalAttention.attend(pool, qkv, layout, start, g.patches(), scale, core);
                start += g.patches();
            }
            t = lap("vision.attention", t);
            matmul(block.proj(), in.set(core, n, h), mixed);
            t = lap("vision.proj", t);
            addBiasedRows(mixed, block.proj().bias(), x, n);
            t = lap("vision.bias, residual", t);
            layerNorm(x, n, block.norm2(), normed);
            t = lap("vision.layernorm", t);
            matmul(block.fc1(), in.set(normed, n, h), up);
            t = lap("vision.mlp.up", t);
            biasAndGelu(up, block.fc1().bias(), n);
            t = lap("vision.bias, gelu", t);
            matmul(block.fc2(), in.set(up, n, c.intermediate()), mixed);
            t = lap("vision.mlp.down", t);
            addBiasedRows(mixed, block.fc2().bias(), x, n);
            lap("vision.bias, residual", t);
            if (trace != null) {
                trace.block(b, x, n);
            }
        }
        // The merger: LayerNorm per patch, then each merge block's rows (consecutive) as one row.
        long tm = StageClock.start();
        layerNorm(x, n, w.mergerNorm(), normed);
        int tokens = n / c.mergeArea();
        int merged = h * c.mergeArea();
        float[] hiddenOut = new float[tokens * merged];
        linear(w.mergerFc1(), in.set(normed, tokens, merged), hiddenOut);
        gelu(hiddenOut, tokens, merged, true);
        float[] out = new float[tokens * c.outHidden()];
        linear(w.mergerFc2(), in.set(hiddenOut, tokens, merged), out);
        StageClock.stop("vision.merger", tm);
        return out;
    }

    /** Adds the time since {@code t0} to {@code stage} and returns the new start (0 when the clocks are off). */
    private static long lap(String stage, long t0) {
        if (t0 == 0L) {
            return 0L;
        }
        long now = System.nanoTime();
        StageClock.add(stage, now - t0);
        return now;
    }

    /** {@code out = in W^T}, the bias left to the pass that follows (fused with it: one pass over the rows less). */
    private void matmul(VisionWeights.Linear l, Activations in, float[] out) {
        PackedGemm.matmul(pool, l.weight(), in, out);
    }

    /** {@code x[r] += (out[r] + bias)} per row: the bias and the residual in one pass (same sums as two). */
    private void addBiasedRows(float[] out, float[] bias, float[] x, int n) {
        int width = bias.length;
        pool.forRange(n, 1, 2L * n * width, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                int o = r * width;
                int j = 0;
                for (; j + L <= width; j += L) {
                    FloatVector m = FloatVector.fromArray(F, out, o + j).add(FloatVector.fromArray(F, bias, j));
                    FloatVector.fromArray(F, x, o + j).add(m).intoArray(x, o + j);
                }
                for (; j < width; j++) {
                    x[o + j] += out[o + j] + bias[j];
                }
            }
        });
    }

    /** The tanh-GELU of {@code up[r] + bias} in place, row by row (the bias and the GELU in one pass). */
    private void biasAndGelu(float[] up, float[] bias, int n) {
        int width = bias.length;
        pool.forRange(n, 1, 16L * n * width, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                VectorMath.add(bias, 0, up, r * width, width);
                Gelu.tanhInPlace(up, r * width, (r + 1) * width);
            }
        });
    }

    /** {@code out = in W^T + b}. */
    private void linear(VisionWeights.Linear l, Activations in, float[] out) {
        PackedGemm.matmul(pool, l.weight(), in, out);
        long t = StageClock.start();
        int rows = in.tokens();
        int width = l.out();
        float[] bias = l.bias();
        pool.forRange(rows, 1, (long) rows * width, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                VectorMath.add(bias, 0, out, r * width, width);
            }
        });
        StageClock.stop("vision.bias (in the linears)", t);
    }

    private void addRows(float[] from, float[] into, int n, int width) {
        pool.forRange(n, 1, (long) n * width, (r0, r1) -> VectorMath.add(from, r0 * width, into, r0 * width, (r1 - r0) * width));
    }

    /** LayerNorm over rows of {@code hidden}, mean and variance in float32 as the reference. */
    private void layerNorm(float[] x, int n, VisionWeights.Norm norm, float[] out) {
        int width = norm.weight().length;
        float eps = c.eps();
        float[] g = norm.weight();
        float[] b = norm.bias();
        pool.forRange(n, 1, 4L * n * width, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                int o = r * width;
                // float vector sums (the reference's float32 arithmetic; the scalar loops in double took 1 % of an encode)
                FloatVector acc = FloatVector.zero(F);
                int i = 0;
                for (; i + L <= width; i += L) {
                    acc = acc.add(FloatVector.fromArray(F, x, o + i));
                }
                double sum = acc.reduceLanes(VectorOperators.ADD);
                for (; i < width; i++) {
                    sum += x[o + i];
                }
                float mean = (float) (sum / width);
                acc = FloatVector.zero(F);
                for (i = 0; i + L <= width; i += L) {
                    FloatVector d = FloatVector.fromArray(F, x, o + i).sub(mean);
                    acc = d.fma(d, acc);
                }
                double sq = acc.reduceLanes(VectorOperators.ADD);
                for (; i < width; i++) {
                    float d = x[o + i] - mean;
                    sq += d * d;
                }
                float inv = (float) (1.0 / Math.sqrt((float) (sq / width) + eps));
                for (i = 0; i + L <= width; i += L) {
                    FloatVector.fromArray(F, x, o + i).sub(mean).mul(inv).fma(FloatVector.fromArray(F, g, i),
                            FloatVector.fromArray(F, b, i)).intoArray(out, o + i);
                }
                for (; i < width; i++) {
                    out[o + i] = (x[o + i] - mean) * inv * g[i] + b[i];
                }
            }
        });
    }

    /** GELU in place: tanh approximation (blocks) or exact erf form (merger). */
    private void gelu(float[] a, int rows, int width, boolean exact) {
        pool.forRange(rows, 1, 16L * rows * width, (r0, r1) -> {
            if (!exact) {
                Gelu.tanhInPlace(a, r0 * width, r1 * width);
                return;
            }
            Gelu.exactInPlace(a, r0 * width, r1 * width);
        });
    }

    /** The qkv bias, then 2-D rotary on the q and k heads of each qkv row (rotate-half over the whole head). */
    private void biasAndRotate(float[] qkv, float[] bias, int n, float[] cos, float[] sin) {
        int h = c.hidden();
        int hd = c.headDim();
        int half = hd / 2;
        int heads = c.heads();
        pool.forRange(n, 1, 8L * n * h, (r0, r1) -> {
            for (int r = r0; r < r1; r++) {
                VectorMath.add(bias, 0, qkv, r * 3 * h, 3 * h);
                int a = r * half;
                for (int part = 0; part < 2; part++) {
                    for (int head = 0; head < heads; head++) {
                        int off = r * 3 * h + part * h + head * hd;
                        for (int j = 0; j < half; j++) {
                            float x1 = qkv[off + j];
                            float x2 = qkv[off + j + half];
                            qkv[off + j] = x1 * cos[a + j] - x2 * sin[a + j];
                            qkv[off + j + half] = x2 * cos[a + j] + x1 * sin[a + j];
                        }
                    }
                }
            }
        });
    }

    /**
     * The learned table sampled bilinearly at {@code linspace(0, side-1, h) x linspace(0, side-1, w)} (corners
     * aligned), repeated over t, in merge-block row order: [patches, hidden].
     */
    float[] positionEmbeddings(List<PatchGrid> grids, int n) {
        int h = c.hidden();
        int side = c.gridSide();
        float[] table = w.positions();
        float[] out = new float[n * h];
        int start = 0;
        for (PatchGrid g : grids) {
            float[] ys = linspace(side - 1, g.h());
            float[] xs = linspace(side - 1, g.w());
            int base = start;
            int slice = g.h() * g.w();
            pool.forRange(g.patches(), 1, 8L * g.patches() * h, (i0, i1) -> {
                for (int i = i0; i < i1; i++) {
                    int p = i % slice;
                    float y = ys[g.row(p, c.merge())];
                    float xq = xs[g.col(p, c.merge())];
                    int y0 = (int) y;
                    int x0 = (int) xq;
                    int y1 = Math.min(y0 + 1, side - 1);
                    int x1 = Math.min(x0 + 1, side - 1);
                    float dy = y - y0;
                    float dx = xq - x0;
                    float w00 = (1 - dy) * (1 - dx);
                    float w01 = (1 - dy) * dx;
                    float w10 = dy * (1 - dx);
                    float w11 = dy * dx;
                    int o = (base + i) * h;
                    int t00 = (y0 * side + x0) * h;
                    int t01 = (y0 * side + x1) * h;
                    int t10 = (y1 * side + x0) * h;
                    int t11 = (y1 * side + x1) * h;
                    for (int k = 0; k < h; k++) {
                        out[o + k] = table[t00 + k] * w00 + table[t01 + k] * w01 + table[t10 + k] * w10 + table[t11 + k] * w11;
                    }
                }
            });
            start += g.patches();
        }
        return out;
    }

    /** torch.linspace(0, end, steps) in float32: the first half counts up from 0, the second down from end. */
    static float[] linspace(float end, int steps) {
        float[] v = new float[steps];
        if (steps == 1) {
            return v;
        }
        float step = end / (steps - 1);
        int halfway = steps / 2;
        for (int i = 0; i < steps; i++) {
            v[i] = i < halfway ? step * i : end - step * (steps - 1 - i);
        }
        return v;
    }

    /** Per patch: [row * f_j for j < headDim/4 | col * f_j], f_j = 1 / 10000^(2j / (headDim/2)). */
    float[] rotaryAngles(List<PatchGrid> grids, int n) {
        int quarter = c.headDim() / 4;
        float[] angles = new float[n * 2 * quarter];
        int start = 0;
        for (PatchGrid g : grids) {
            int slice = g.h() * g.w();
            for (int i = 0; i < g.patches(); i++) {
                int p = i % slice;
                int row = g.row(p, c.merge());
                int col = g.col(p, c.merge());
                int o = (start + i) * 2 * quarter;
                for (int j = 0; j < quarter; j++) {
                    angles[o + j] = row * invFreq[j];
                    angles[o + quarter + j] = col * invFreq[j];
                }
            }
            start += g.patches();
        }
        return angles;
    }
}
