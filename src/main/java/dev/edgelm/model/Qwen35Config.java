package dev.edgelm.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * Hyper-parameters of the Qwen3.5 text decoder. Immutable.
 *
 * @param fullAttention     per layer: true for gated full attention, false for Gated DeltaNet
 * @param rotaryDim         dims of each attention head that RoPE turns (head_dim x partial_rotary_factor)
 * @param mropeSection      rotary frequencies given to the (temporal, height, width) streams, interleaved
 * @param valueHeadsTiled   false (Hugging Face order): value head h reads key head h / (Hv/Hk);
 *                          true (llama.cpp GGUF order): value head h reads key head h % Hk
 */
public record Qwen35Config(
        int hiddenSize,
        int numLayers,
        boolean[] fullAttention,
        int numHeads,
        int numKvHeads,
        int headDim,
        int rotaryDim,
        double ropeTheta,
        int[] mropeSection,
        int linearKeyHeads,
        int linearValueHeads,
        int linearKeyDim,
        int linearValueDim,
        int convKernel,
        int intermediateSize,
        int vocabSize,
        float rmsNormEps,
        boolean tiedEmbeddings,
        boolean valueHeadsTiled,
        int eosTokenId) {

    private static final Set<String> KNOWN_MODEL_TYPES = Set.of("qwen3_5", "qwen3_5_text");

    /** Channels of the causal depthwise convolution: q, k and v of the linear-attention layers. */
    public int convDim() {
        return 2 * linearKeyHeads * linearKeyDim + linearValueHeads * linearValueDim;
    }

    public int linearValueTotal() {
        return linearValueHeads * linearValueDim;
    }

    public int linearKeyTotal() {
        return linearKeyHeads * linearKeyDim;
    }

    /** The key head read by value head {@code h} of a linear-attention layer. */
    public int keyHeadOfValueHead(int h) {
        return valueHeadsTiled ? h % linearKeyHeads : h / (linearValueHeads / linearKeyHeads);
    }

    public int numFullAttentionLayers() {
        int n = 0;
        for (boolean f : fullAttention) {
            n += f ? 1 : 0;
        }
        return n;
    }

    /** More layers than any released model has by an order of magnitude: a config declaring more is refused. */
    public static final int MAX_LAYERS = 1024;

    public static Qwen35Config load(Path configJson) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(configJson));
        } catch (IOException e) {
            throw new EdgeLmException(configJson + ": cannot read or parse: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new EdgeLmException(configJson + ": not a JSON object");
        }
        return fromJson(root, configJson.toString());
    }

    /** Reads the released nested layout ({@code text_config}) or a flat text-model config. */
    public static Qwen35Config fromJson(JsonNode root, String source) {
        String modelType = root.path("model_type").asText("");
        if (!KNOWN_MODEL_TYPES.contains(modelType)) {
            throw new EdgeLmException(source + ": model_type '" + modelType
                    + "' is not a Qwen3.5 model (expected one of qwen3_5, qwen3_5_text)");
        }
        JsonNode text = root.has("text_config") ? root.get("text_config") : root;
        Fields f = new Fields(text, source + (root.has("text_config") ? " text_config" : ""));
        int hidden = f.integer("hidden_size");
        int layers = f.integer("num_hidden_layers");
        if (layers > MAX_LAYERS) { // checked before anything is sized by it
            throw new EdgeLmException(f.source + ": num_hidden_layers = " + layers + " is more than " + MAX_LAYERS);
        }
        boolean[] full = new boolean[layers];
        JsonNode types = text.get("layer_types");
        if (types != null && types.isArray()) {
            if (types.size() != layers) {
                throw new EdgeLmException(f.source + ": layer_types has " + types.size() + " entries but num_hidden_layers is " + layers);
            }
            for (int i = 0; i < layers; i++) {
                String t = types.get(i).asText();
                switch (t) {
                    case "full_attention" -> full[i] = true;
                    case "linear_attention" -> full[i] = false;
                    default -> throw new EdgeLmException(f.source + ": layer_types[" + i + "] = '" + t + "' is not full_attention or linear_attention");
                }
            }
        } else {
            int interval = f.integer("full_attention_interval");
            for (int i = 0; i < layers; i++) {
                full[i] = (i + 1) % interval == 0;
            }
        }
        int heads = f.integer("num_attention_heads");
        int kvHeads = f.integer("num_key_value_heads");
        int headDim = text.has("head_dim") ? f.integer("head_dim") : hidden / heads;
        JsonNode rope = text.has("rope_parameters") ? text.get("rope_parameters") : text;
        double theta = rope.has("rope_theta") ? rope.get("rope_theta").asDouble() : f.number("rope_theta");
        double partial = rope.has("partial_rotary_factor") ? rope.get("partial_rotary_factor").asDouble()
                : text.path("partial_rotary_factor").asDouble(1.0);
        int rotaryDim = (int) (headDim * partial);
        int[] section = null;
        JsonNode sec = rope.get("mrope_section");
        if (sec != null && sec.isArray()) {
            section = new int[sec.size()];
            for (int i = 0; i < section.length; i++) {
                section[i] = sec.get(i).asInt();
            }
        }
        if (section == null) {
            section = new int[] {rotaryDim / 2, 0, 0};
        }
        int kHeads = f.integer("linear_num_key_heads");
        int vHeads = f.integer("linear_num_value_heads");
        if (vHeads % kHeads != 0) {
            throw new EdgeLmException(f.source + ": linear_num_value_heads (" + vHeads + ") is not a multiple of linear_num_key_heads (" + kHeads + ")");
        }
        if (heads % kvHeads != 0) {
            throw new EdgeLmException(f.source + ": num_attention_heads (" + heads + ") is not a multiple of num_key_value_heads (" + kvHeads + ")");
        }
        if (rotaryDim % 2 != 0 || rotaryDim > headDim) {
            throw new EdgeLmException(f.source + ": rotary dim " + rotaryDim + " (head_dim x partial_rotary_factor) must be even and at most head_dim");
        }
        boolean tied = root.has("tie_word_embeddings") ? root.get("tie_word_embeddings").asBoolean()
                : text.path("tie_word_embeddings").asBoolean(false);
        return new Qwen35Config(hidden, layers, full, heads, kvHeads, headDim, rotaryDim, theta, section,
                kHeads, vHeads, f.integer("linear_key_head_dim"), f.integer("linear_value_head_dim"),
                f.integer("linear_conv_kernel_dim"), f.integer("intermediate_size"), f.integer("vocab_size"),
                (float) (text.has("rms_norm_eps") ? text.get("rms_norm_eps").asDouble() : 1e-6),
                tied, false, text.path("eos_token_id").asInt(-1));
    }

    private record Fields(JsonNode node, String source) {
        int integer(String name) {
            JsonNode v = node.get(name);
            if (v == null || !v.canConvertToInt() || v.asInt() <= 0) {
                throw new EdgeLmException(source + ": missing or invalid field '" + name + "' (a positive integer)");
            }
            return v.asInt();
        }

        double number(String name) {
            JsonNode v = node.get(name);
            if (v == null || !v.isNumber()) {
                throw new EdgeLmException(source + ": missing or invalid field '" + name + "' (a number)");
            }
            return v.asDouble();
        }
    }

    @Override
    public String toString() {
        return "Qwen35Config[hidden=" + hiddenSize + ", layers=" + numLayers + " " + layerPattern()
                + ", heads=" + numHeads + "/" + numKvHeads + "x" + headDim + ", rotary=" + rotaryDim
                + ", theta=" + ropeTheta + ", linear heads k/v=" + linearKeyHeads + "/" + linearValueHeads
                + "x" + linearKeyDim + "/" + linearValueDim + ", mlp=" + intermediateSize + ", vocab=" + vocabSize
                + ", tied=" + tiedEmbeddings + ", mrope=" + Arrays.toString(mropeSection) + "]";
    }

    /** e.g. "LLLF LLLF". */
    public String layerPattern() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < numLayers; i++) {
            if (i > 0 && i % 4 == 0) {
                sb.append(' ');
            }
            sb.append(fullAttention[i] ? 'F' : 'L');
        }
        return sb.toString();
    }
}
