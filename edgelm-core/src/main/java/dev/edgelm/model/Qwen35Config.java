package dev.edgelm.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.Limits;
import dev.edgelm.util.TextFiles;
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
            root = new ObjectMapper().readTree(TextFiles.readUtf8(configJson));
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
        int hidden = f.dimension("hidden_size");
        int layers = f.integer("num_hidden_layers");
        if (layers > Limits.layers()) {
            throw new EdgeLmException(f.source + ": num_hidden_layers = " + layers + " is more than " + Limits.layers()
                    + " (the limit edgelm.limit.layers; released Qwen3.5 models have at most 64)");
        }
        boolean[] full = new boolean[layers];
        JsonNode types = text.get("layer_types");
        if (types != null && types.isArray()) {
            if (types.size() != layers) {
                throw new EdgeLmException(f.source + ": layer_types has " + types.size() + " entries but num_hidden_layers is " + layers);
            }
            for (int i = 0; i < layers; i++) {
                if (!types.get(i).isTextual()) {
                    throw new EdgeLmException(f.source + ": layer_types[" + i + "] is not a string");
                }
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
        int heads = f.dimension("num_attention_heads");
        int kvHeads = f.dimension("num_key_value_heads");
        int headDim = text.has("head_dim") ? f.dimension("head_dim") : hidden / heads;
        if (headDim < 1) {
            throw new EdgeLmException(f.source + ": hidden_size / num_attention_heads is 0: give head_dim");
        }
        checkProduct(2L * heads * headDim, "2 x num_attention_heads x head_dim", f.source);
        JsonNode rope = text.has("rope_parameters") ? text.get("rope_parameters") : text;
        Fields r = new Fields(rope, f.source + (text.has("rope_parameters") ? " rope_parameters" : ""));
        double theta = rope.has("rope_theta") ? r.positive("rope_theta") : f.positive("rope_theta");
        double partial = rope.has("partial_rotary_factor") ? r.positive("partial_rotary_factor")
                : text.has("partial_rotary_factor") ? f.positive("partial_rotary_factor") : 1.0;
        if (partial > 1) {
            throw new EdgeLmException(f.source + ": partial_rotary_factor = " + partial + " is more than 1");
        }
        int rotaryDim = (int) (headDim * partial);
        int[] section = null;
        JsonNode sec = rope.get("mrope_section");
        if (sec != null && sec.isArray()) {
            section = new int[sec.size()];
            long sum = 0;
            for (int i = 0; i < section.length; i++) {
                JsonNode s = sec.get(i);
                if (!s.isIntegralNumber() || !s.canConvertToInt() || s.asInt() < 0) {
                    throw new EdgeLmException(r.source + ": mrope_section[" + i + "] = " + s + " is not a non-negative integer");
                }
                section[i] = s.asInt();
                sum += section[i];
            }
            if (sum > rotaryDim / 2) {
                throw new EdgeLmException(r.source + ": mrope_section " + sec + " adds up to " + sum
                        + ", more than the " + rotaryDim / 2 + " rotary frequencies");
            }
        }
        if (section == null) {
            section = new int[] {rotaryDim / 2, 0, 0};
        }
        int kHeads = f.dimension("linear_num_key_heads");
        int vHeads = f.dimension("linear_num_value_heads");
        int kDim = f.dimension("linear_key_head_dim");
        int vDim = f.dimension("linear_value_head_dim");
        checkProduct(2L * kHeads * kDim + (long) vHeads * vDim, "the linear attention's conv channels", f.source);
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
        double eps = text.has("rms_norm_eps") ? f.positive("rms_norm_eps") : 1e-6;
        checkRmsEps(eps, f.source + ": rms_norm_eps");
        int vocab = f.integer("vocab_size");
        return new Qwen35Config(hidden, layers, full, heads, kvHeads, headDim, rotaryDim, theta, section,
                kHeads, vHeads, kDim, vDim,
                f.integer("linear_conv_kernel_dim"), f.dimension("intermediate_size"), vocab,
                (float) eps, tied, false, eosTokenId(text.path("eos_token_id"), vocab, f.source));
    }

    /**
     * {@code eos_token_id}: absent (-1), one id or a list of ids (-1: the generation config names the stop tokens),
     * each a token of the vocabulary; anything else is an error naming the field, so that neither a run nor a
     * converted file stops on a token the model cannot produce.
     */
    private static int eosTokenId(JsonNode node, int vocab, String source) {
        if (node.isMissingNode() || node.isNull()) {
            return -1;
        }
        for (JsonNode id : node.isArray() ? node : java.util.List.of(node)) {
            if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0 || id.asInt() >= vocab) {
                throw new EdgeLmException(source + ": eos_token_id " + id + " is not a token of the vocabulary (0 to "
                        + (vocab - 1) + ")");
            }
        }
        return node.isArray() ? -1 : node.asInt();
    }

    /** An RMS epsilon: finite, above 0 and below 1 (released models use 1e-6); {@code what} names the field. */
    public static void checkRmsEps(double eps, String what) {
        if (!(eps > 0 && eps < 1) || (float) eps == 0f) {
            throw new EdgeLmException(what + " = " + eps + " must be a number above 0 (as a float32) and below 1 (released models: 1e-6)");
        }
    }

    /** A RoPE base frequency: finite and above 0 (released models use 10,000,000); {@code what} names the field. */
    public static void checkRopeTheta(double theta, String what) {
        if (!(theta > 0 && Double.isFinite(theta))) {
            throw new EdgeLmException(what + " = " + theta + " must be a finite number above 0 (released models: 1e7)");
        }
    }

    /** A product of dimensions within {@link Limits#dimension()}. */
    static void checkProduct(long value, String what, String source) {
        if (value > Limits.dimension()) {
            throw new EdgeLmException(source + ": " + what + " = " + value + " is more than " + Limits.dimension()
                    + " (the limit edgelm.limit.dim)");
        }
    }

    private record Fields(JsonNode node, String source) {
        int integer(String name) {
            JsonNode v = node.get(name);
            if (v == null) {
                throw new EdgeLmException(source + ": missing field '" + name + "' (a positive integer)");
            }
            if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() <= 0) {
                throw new EdgeLmException(source + ": field '" + name + "' = " + brief(v) + " is not a positive integer");
            }
            return v.asInt();
        }

        /** A positive integer within {@link Limits#dimension()}. */
        int dimension(String name) {
            int v = integer(name);
            checkProduct(v, name, source);
            return v;
        }

        /** A finite number above 0. */
        double positive(String name) {
            JsonNode v = node.get(name);
            if (v == null) {
                throw new EdgeLmException(source + ": missing field '" + name + "' (a number)");
            }
            if (!v.isNumber() || !Double.isFinite(v.asDouble()) || v.asDouble() <= 0) {
                throw new EdgeLmException(source + ": field '" + name + "' = " + brief(v) + " is not a number above 0");
            }
            return v.asDouble();
        }

        private static String brief(JsonNode v) {
            String s = v.toString();
            return s.length() > 60 ? s.substring(0, 60) + "..." : s;
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
