package dev.edgelm.vision;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.util.EdgeLmException;

/**
 * Hyper-parameters of Qwen3.5's vision tower (a ViT with a 2x2 patch merger). Immutable.
 *
 * @param depth          transformer blocks
 * @param hidden         width of the blocks
 * @param heads          attention heads (head dim = hidden / heads)
 * @param intermediate   MLP width
 * @param patch          side of a square patch in pixels
 * @param temporalPatch  frames per patch (an image is repeated to fill them)
 * @param merge          side of the block of patches that becomes one token
 * @param gridSide       the learned position table is gridSide x gridSide
 * @param outHidden      width of the merger's output (the text model's hidden size)
 * @param eps            LayerNorm epsilon
 */
public record VisionConfig(int depth, int hidden, int heads, int intermediate, int patch, int temporalPatch,
                           int merge, int gridSide, int outHidden, float eps) {
    static final int CHANNELS = 3;

    public VisionConfig {
        if (hidden % heads != 0 || (hidden / heads) % 4 != 0) {
            throw new EdgeLmException("vision tower: hidden size " + hidden + " over " + heads
                    + " heads must give a head dim that is a multiple of 4 (2-D rotary)");
        }
    }

    public int headDim() {
        return hidden / heads;
    }

    /** Values of one flattened patch: (channel, time, y, x). */
    public int patchDim() {
        return CHANNELS * temporalPatch * patch * patch;
    }

    /** Patches per merged token. */
    public int mergeArea() {
        return merge * merge;
    }

    /** The {@code vision_config} object of a Hugging Face config.json. */
    public static VisionConfig fromJson(JsonNode v, String source) {
        String src = source + " vision_config";
        int positions = positive(v, "num_position_embeddings", src);
        int side = (int) Math.round(Math.sqrt(positions));
        if (side * side != positions) {
            throw new EdgeLmException(src + ": num_position_embeddings = " + positions + " is not a square grid");
        }
        if (v.has("deepstack_visual_indexes") && v.get("deepstack_visual_indexes").size() > 0) {
            throw new EdgeLmException(src + ": deepstack_visual_indexes is not empty; EdgeLM runs Qwen3.5's vision tower, which has none");
        }
        String act = v.path("hidden_act").asText("gelu_pytorch_tanh");
        if (!act.equals("gelu_pytorch_tanh")) {
            throw new EdgeLmException(src + ": hidden_act '" + act + "' is not supported (expected gelu_pytorch_tanh)");
        }
        if (v.path("in_channels").asInt(CHANNELS) != CHANNELS) {
            throw new EdgeLmException(src + ": in_channels must be 3");
        }
        return new VisionConfig(positive(v, "depth", src), positive(v, "hidden_size", src), positive(v, "num_heads", src),
                positive(v, "intermediate_size", src), positive(v, "patch_size", src),
                positive(v, "temporal_patch_size", src), positive(v, "spatial_merge_size", src), side,
                positive(v, "out_hidden_size", src), 1e-6f);
    }

    /** The {@code clip.vision.*} keys of a llama.cpp vision projector (mmproj) file. */
    public static VisionConfig fromGguf(GgufMetadata m, String source) {
        int patch = m.requirePositiveInt("clip.vision.patch_size");
        int imageSize = m.requirePositiveInt("clip.vision.image_size");
        if (imageSize % patch != 0) {
            throw new EdgeLmException(source + ": clip.vision.image_size = " + imageSize + " is not a multiple of the patch size " + patch);
        }
        float eps = m.optDouble("clip.vision.attention.layer_norm_epsilon").orElse(1e-6).floatValue();
        int merge = m.optLong("clip.vision.spatial_merge_size").map(Long::intValue).orElse(2);
        return new VisionConfig(m.requirePositiveInt("clip.vision.block_count"),
                m.requirePositiveInt("clip.vision.embedding_length"),
                m.requirePositiveInt("clip.vision.attention.head_count"),
                m.requirePositiveInt("clip.vision.feed_forward_length"), patch, 2, merge, imageSize / patch,
                m.requirePositiveInt("clip.vision.projection_dim"), eps);
    }

    private static int positive(JsonNode v, String name, String src) {
        JsonNode f = v.get(name);
        if (f == null || !f.canConvertToInt() || f.asInt() <= 0) {
            throw new EdgeLmException(src + ": missing or invalid field '" + name + "' (a positive integer)");
        }
        return f.asInt();
    }

    @Override
    public String toString() {
        return "depth " + depth + ", width " + hidden + ", " + heads + " heads x " + headDim() + ", MLP " + intermediate
                + ", patch " + patch + " (x" + temporalPatch + " frames), merge " + merge + "x" + merge
                + ", position table " + gridSide + "x" + gridSide + ", output " + outHidden;
    }
}
