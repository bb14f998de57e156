package dev.edgelm.convert;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.util.EdgeLmException;

/**
 * The sizes of a Qwen3.5 vision tower ({@code config.json}'s {@code vision_config}) and the text width its
 * merger projects to: what the vision projector (mmproj) file's layout and metadata depend on.
 */
public record VisionTowerShape(int depth, int hidden, int heads, int intermediate, int patchSize, int temporalPatchSize,
                               int inChannels, int positionEmbeddings, int outHidden, int mergeSize, int textHidden,
                               float layerNormEps, int[] deepstackLayers) {

    public VisionTowerShape {
        deepstackLayers = deepstackLayers.clone();
    }

    @Override
    public int[] deepstackLayers() {
        return deepstackLayers.clone();
    }

    /** The released towers (Qwen3.5 family table): 0.8B 12 / 768 / 12 / 3072, 2B and 4B 24 / 1024 / 16 / 4096. */
    public static VisionTowerShape released(int depth, int hidden, int heads, int intermediate, int textHidden) {
        return new VisionTowerShape(depth, hidden, heads, intermediate, 16, 2, 3, 2304, textHidden, 2, textHidden, 1e-6f, new int[0]);
    }

    /** Width of the merger's input: {@code hidden x merge^2} (four patches per token). */
    public int mergedWidth() {
        return hidden * mergeSize * mergeSize;
    }

    /** Values per patch: channels x temporal patch x patch^2. */
    public int patchValues() {
        return inChannels * temporalPatchSize * patchSize * patchSize;
    }

    /** Side of the square position table: {@code sqrt(positionEmbeddings)}. */
    public int positionGrid() {
        return (int) Math.round(Math.sqrt(positionEmbeddings));
    }

    /** The shape in a checkpoint's {@code config.json}, or null when it has no {@code vision_config}. */
    public static VisionTowerShape fromConfig(JsonNode config, String source) {
        JsonNode v = config.get("vision_config");
        if (v == null || !v.isObject()) {
            return null;
        }
        JsonNode text = config.has("text_config") ? config.get("text_config") : config;
        int textHidden = positive(text, "hidden_size", -1, source, "text_config.");
        int hidden = positive(v, "hidden_size", -1, source, "vision_config.");
        int positions = positive(v, "num_position_embeddings", 2304, source, "vision_config.");
        int grid = (int) Math.round(Math.sqrt(positions));
        if (grid * grid != positions) {
            throw new EdgeLmException(source + ": vision_config.num_position_embeddings " + positions + " is not a square");
        }
        JsonNode ds = v.path("deepstack_visual_indexes");
        int[] deepstack = new int[ds.isArray() ? ds.size() : 0];
        for (int i = 0; i < deepstack.length; i++) {
            deepstack[i] = ds.get(i).asInt();
        }
        int depth = positive(v, "depth", -1, source, "vision_config.");
        for (int d : deepstack) {
            if (d < 0 || d >= depth) {
                throw new EdgeLmException(source + ": vision_config.deepstack_visual_indexes holds " + d + ", outside 0.." + (depth - 1));
            }
        }
        int heads = positive(v, "num_heads", -1, source, "vision_config.");
        if (hidden % heads != 0) {
            throw new EdgeLmException(source + ": vision_config.hidden_size " + hidden + " is not a multiple of num_heads " + heads);
        }
        return new VisionTowerShape(depth, hidden, heads,
                positive(v, "intermediate_size", -1, source, "vision_config."),
                positive(v, "patch_size", 16, source, "vision_config."),
                positive(v, "temporal_patch_size", 2, source, "vision_config."),
                positive(v, "in_channels", 3, source, "vision_config."),
                positions,
                positive(v, "out_hidden_size", textHidden, source, "vision_config."),
                positive(v, "spatial_merge_size", 2, source, "vision_config."),
                textHidden,
                (float) text.path("rms_norm_eps").asDouble(1e-6),
                deepstack);
    }

    private static int positive(JsonNode node, String key, int fallback, String source, String prefix) {
        JsonNode n = node.get(key);
        if (n == null || n.isNull()) {
            if (fallback > 0) {
                return fallback;
            }
            throw new EdgeLmException(source + ": " + prefix + key + " is missing");
        }
        if (!n.isIntegralNumber() || n.asLong() <= 0 || n.asLong() > Integer.MAX_VALUE) {
            throw new EdgeLmException(source + ": " + prefix + key + " = " + n + " is not a positive integer");
        }
        return n.asInt();
    }
}
