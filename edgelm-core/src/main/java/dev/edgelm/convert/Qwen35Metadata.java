package dev.edgelm.convert;

import static dev.edgelm.model.Qwen35GgufLayout.*;

import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufValueType;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.util.EdgeLmException;
import java.util.Map;

/** The {@code general.*} and {@code qwen35.*} metadata of a Qwen3.5 GGUF, in llama.cpp's order. */
public final class Qwen35Metadata {
    private Qwen35Metadata() {}

    /**
     * Adds the architecture keys of {@code c} written with {@code recipe}; {@code source} names the model
     * in errors (a layer pattern the layout cannot express).
     */
    public static void put(Map<String, GgufValue> meta, Qwen35Config c, QuantRecipe recipe, String name,
                           long contextLength, String source) {
        meta.put("general.architecture", GgufValue.string(ARCHITECTURE));
        meta.put("general.type", GgufValue.string("model"));
        meta.put("general.name", GgufValue.string(name));
        meta.put("general.file_type", GgufValue.u32(recipe.fileType()));
        if (recipe != QuantRecipe.BF16) {
            meta.put("general.quantization_version", GgufValue.u32(2));
        }
        meta.put(BLOCK_COUNT, GgufValue.u32(c.numLayers()));
        meta.put(CONTEXT_LENGTH, GgufValue.u32(contextLength));
        meta.put(EMBEDDING_LENGTH, GgufValue.u32(c.hiddenSize()));
        meta.put(FEED_FORWARD_LENGTH, GgufValue.u32(c.intermediateSize()));
        meta.put(HEAD_COUNT, GgufValue.u32(c.numHeads()));
        meta.put(HEAD_COUNT_KV, GgufValue.u32(c.numKvHeads()));
        long[] sections = new long[4];
        for (int i = 0; i < Math.min(3, c.mropeSection().length); i++) {
            sections[i] = c.mropeSection()[i];
        }
        meta.put(ROPE_DIMENSION_SECTIONS, GgufValue.integerArray(GgufValueType.INT32, sections));
        meta.put(ROPE_FREQ_BASE, GgufValue.f32((float) c.ropeTheta()));
        meta.put(RMS_EPS, GgufValue.f32(c.rmsNormEps()));
        meta.put(KEY_LENGTH, GgufValue.u32(c.headDim()));
        meta.put(VALUE_LENGTH, GgufValue.u32(c.headDim()));
        meta.put(SSM_CONV_KERNEL, GgufValue.u32(c.convKernel()));
        meta.put(SSM_STATE_SIZE, GgufValue.u32(c.linearKeyDim()));
        meta.put(SSM_GROUP_COUNT, GgufValue.u32(c.linearKeyHeads()));
        meta.put(SSM_TIME_STEP_RANK, GgufValue.u32(c.linearValueHeads()));
        meta.put(SSM_INNER_SIZE, GgufValue.u32(c.linearValueTotal()));
        meta.put(FULL_ATTENTION_INTERVAL, GgufValue.u32(fullAttentionInterval(c, source)));
        meta.put(ROPE_DIMENSION_COUNT, GgufValue.u32(c.rotaryDim()));
    }

    /** llama.cpp only knows periodic layouts: full attention at every interval-th layer. */
    private static int fullAttentionInterval(Qwen35Config c, String source) {
        boolean[] full = c.fullAttention();
        int interval = 0;
        for (int i = 0; i < full.length && interval == 0; i++) {
            interval = full[i] ? i + 1 : 0;
        }
        if (interval == 0) {
            interval = full.length + 1;
        }
        for (int i = 0; i < full.length; i++) {
            if (full[i] != ((i + 1) % interval == 0)) {
                throw new EdgeLmException(source + ": layer_types " + c.layerPattern()
                        + " are not periodic; the qwen35 GGUF layout needs full attention every N-th layer");
            }
        }
        return interval;
    }
}
