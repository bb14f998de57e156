package dev.edgelm.vision;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.tensor.F32Matrix;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;

/**
 * Builds {@link VisionWeights} from a Hugging Face checkpoint ({@code model.visual.*}) or from llama.cpp's vision
 * projector file (mmproj: architecture {@code clip}, projector type {@code qwen3vl_merger}), checking every shape
 * and naming the tensor and file in each error.
 *
 * <p>Name map (checkpoint / mmproj): {@code patch_embed.proj} / {@code v.patch_embd} (the GGUF splits the Conv3d
 * kernel into its temporal frames: {@code .weight} frame 0, {@code .weight.1} frame 1), {@code pos_embed} /
 * {@code v.position_embd}, {@code blocks.N.{norm1,norm2,attn.qkv,attn.proj,mlp.linear_fc1,mlp.linear_fc2}} /
 * {@code v.blk.N.{ln1,ln2,attn_qkv,attn_out,ffn_up,ffn_down}}, {@code merger.norm} / {@code v.post_ln},
 * {@code merger.linear_fc1} / {@code mm.0}, {@code merger.linear_fc2} / {@code mm.2}.
 */
public final class VisionLoader {
    public static final String CHECKPOINT_PREFIX = "model.visual.";
    static final String PROJECTOR_TYPE = "qwen3vl_merger";

    private VisionLoader() {}

    /** Whether a checkpoint's tensors include a vision tower. */
    public static boolean hasVisionTower(Map<String, TensorView> tensors) {
        return tensors.containsKey(CHECKPOINT_PREFIX + "patch_embed.proj.weight");
    }

    public static VisionWeights fromCheckpoint(Map<String, TensorView> tensors, VisionConfig c, String source) {
        Shapes s = new Shapes(c);
        Named<TensorView> t = (name, shape) -> {
            TensorView v = tensors.get(CHECKPOINT_PREFIX + name);
            if (v == null) {
                throw new EdgeLmException(source + ": the vision tower needs tensor " + CHECKPOINT_PREFIX + name + " "
                        + Arrays.toString(shape) + ", which is missing");
            }
            if (!Arrays.equals(v.shape(), shape)) {
                throw new EdgeLmException(v.source() + ": tensor " + v.name() + " has shape " + v.shapeString()
                        + ", expected " + Arrays.toString(shape));
            }
            return v;
        };
        int h = c.hidden();
        var patch = new VisionWeights.Linear(
                t.get("patch_embed.proj.weight", h, VisionConfig.CHANNELS, c.temporalPatch(), c.patch(), c.patch()).asMatrix(),
                t.get("patch_embed.proj.bias", h).toFloatArray());
        float[] positions = t.get("pos_embed.weight", (long) c.gridSide() * c.gridSide(), h).toFloatArray();
        VisionWeights.Block[] blocks = new VisionWeights.Block[c.depth()];
        for (int i = 0; i < blocks.length; i++) {
            String p = "blocks." + i + ".";
            blocks[i] = new VisionWeights.Block(
                    norm(t, p + "norm1", h),
                    linear(t, p + "attn.qkv", 3 * h, h),
                    linear(t, p + "attn.proj", h, h),
                    norm(t, p + "norm2", h),
                    linear(t, p + "mlp.linear_fc1", c.intermediate(), h),
                    linear(t, p + "mlp.linear_fc2", h, c.intermediate()));
        }
        return new VisionWeights(patch, positions, blocks, norm(t, "merger.norm", h),
                linear(t, "merger.linear_fc1", s.merged(), s.merged()),
                linear(t, "merger.linear_fc2", c.outHidden(), s.merged()));
    }

    /** Checks that {@code file} is a Qwen3.5 vision projector and returns its config. */
    public static VisionConfig configOf(GgufFile file) {
        var m = file.metadata();
        String src = file.source();
        String arch = m.optString("general.architecture").orElse("");
        if (!arch.equals("clip")) {
            throw new EdgeLmException(src + ": not a vision projector (general.architecture is '" + arch + "', expected 'clip')");
        }
        String type = m.optString("clip.projector_type").or(() -> m.optString("clip.vision.projector_type")).orElse("");
        if (!type.equals(PROJECTOR_TYPE)) {
            throw new EdgeLmException(src + ": projector type '" + type + "' is not supported (EdgeLM reads '"
                    + PROJECTOR_TYPE + "', Qwen3.5's vision tower)");
        }
        if (m.optBoolean("clip.has_vision_encoder").orElse(true) == Boolean.FALSE) {
            throw new EdgeLmException(src + ": clip.has_vision_encoder is false: the file holds no vision encoder");
        }
        return VisionConfig.fromGguf(m, src);
    }

    public static VisionWeights fromGguf(GgufFile file, VisionConfig c) {
        String src = file.source();
        Shapes s = new Shapes(c);
        Named<GgufTensor> t = (name, shape) -> {
            GgufTensor v = file.tensor(name);
            if (v == null) {
                throw new EdgeLmException(src + ": the vision tower needs tensor " + name + " " + Arrays.toString(shape)
                        + ", which is missing");
            }
            if (!Arrays.equals(v.info().rowMajorShape(), shape)) {
                throw new EdgeLmException(src + ": tensor " + name + " has shape " + Arrays.toString(v.info().rowMajorShape())
                        + " (row-major), expected " + Arrays.toString(shape));
            }
            return v;
        };
        int h = c.hidden();
        float[][] frames = new float[c.temporalPatch()][];
        for (int f = 0; f < frames.length; f++) {
            String name = "v.patch_embd.weight" + (f == 0 ? "" : "." + f);
            frames[f] = t.get(name, h, VisionConfig.CHANNELS, c.patch(), c.patch()).toFloatArray();
        }
        var patch = new VisionWeights.Linear(interleaveFrames(frames, h, c), t.get("v.patch_embd.bias", h).toFloatArray());
        float[] positions = t.get("v.position_embd.weight", (long) c.gridSide() * c.gridSide(), h).toFloatArray();
        VisionWeights.Block[] blocks = new VisionWeights.Block[c.depth()];
        for (int i = 0; i < blocks.length; i++) {
            String p = "v.blk." + i + ".";
            blocks[i] = new VisionWeights.Block(
                    gnorm(t, p + "ln1", h),
                    glinear(t, p + "attn_qkv", 3 * h, h),
                    glinear(t, p + "attn_out", h, h),
                    gnorm(t, p + "ln2", h),
                    glinear(t, p + "ffn_up", c.intermediate(), h),
                    glinear(t, p + "ffn_down", h, c.intermediate()));
        }
        return new VisionWeights(patch, positions, blocks, gnorm(t, "v.post_ln", h),
                glinear(t, "mm.0", s.merged(), s.merged()), glinear(t, "mm.2", c.outHidden(), s.merged()));
    }

    /**
     * The Conv3d kernel as one [hidden, (channel, time, y, x)] matrix from its per-frame halves [hidden, (channel,
     * y, x)]. A float32 copy on the heap (hidden x patchDim: 7 MB at the largest released size), so that the patch
     * embedding stays one matmul over the processor's row layout.
     */
    private static WeightMatrix interleaveFrames(float[][] frames, int hidden, VisionConfig c) {
        int area = c.patch() * c.patch();
        int frameCount = frames.length;
        int cols = c.patchDim();
        MemorySegment seg = MemorySegment.ofArray(new byte[Math.multiplyExact(4 * hidden, cols)]);
        ValueLayout.OfFloat le = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        for (int o = 0; o < hidden; o++) {
            for (int ch = 0; ch < VisionConfig.CHANNELS; ch++) {
                for (int f = 0; f < frameCount; f++) {
                    long dst = 4L * ((long) o * cols + (long) (ch * frameCount + f) * area);
                    MemorySegment.copy(frames[f], (o * VisionConfig.CHANNELS + ch) * area, seg, le, dst, area);
                }
            }
        }
        return new F32Matrix(seg, hidden, cols);
    }

    @FunctionalInterface
    private interface Named<T> {
        T get(String name, long... shape);
    }

    private record Shapes(VisionConfig c) {
        int merged() {
            return c.hidden() * c.mergeArea();
        }
    }

    private static VisionWeights.Linear linear(Named<TensorView> t, String name, int rows, int cols) {
        return new VisionWeights.Linear(t.get(name + ".weight", rows, cols).asMatrix(), t.get(name + ".bias", rows).toFloatArray());
    }

    private static VisionWeights.Norm norm(Named<TensorView> t, String name, int n) {
        return new VisionWeights.Norm(t.get(name + ".weight", n).toFloatArray(), t.get(name + ".bias", n).toFloatArray());
    }

    private static VisionWeights.Linear glinear(Named<GgufTensor> t, String name, int rows, int cols) {
        return new VisionWeights.Linear(t.get(name + ".weight", rows, cols).asMatrix(), t.get(name + ".bias", rows).toFloatArray());
    }

    private static VisionWeights.Norm gnorm(Named<GgufTensor> t, String name, int n) {
        return new VisionWeights.Norm(t.get(name + ".weight", n).toFloatArray(), t.get(name + ".bias", n).toFloatArray());
    }
}
