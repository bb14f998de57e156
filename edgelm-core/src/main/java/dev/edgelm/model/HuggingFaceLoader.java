package dev.edgelm.model;

import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * Builds {@link Qwen35Weights} from a Hugging Face checkpoint's tensor names, checking every shape.
 * Released checkpoints prefix the language model with {@code model.language_model.}; text-only exports
 * use {@code model.}. {@code mtp.*} and {@code model.visual.*} are not part of the text decoder.
 */
public final class HuggingFaceLoader {
    private final Map<String, TensorView> tensors;
    private final Qwen35Config c;
    private final String prefix;
    private final String source;

    private HuggingFaceLoader(Map<String, TensorView> tensors, Qwen35Config config, String source) {
        this.tensors = tensors;
        this.c = config;
        this.source = source;
        this.prefix = tensors.containsKey("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
    }

    /** Loads config.json and the safetensors weights of a checkpoint folder. */
    public static Qwen35Model load(Path folder, int threads) {
        if (!Files.isDirectory(folder)) {
            throw new EdgeLmException(folder + ": not a checkpoint folder");
        }
        Path configPath = folder.resolve("config.json");
        if (!Files.isRegularFile(configPath)) {
            throw new EdgeLmException(folder + ": no config.json");
        }
        Qwen35Config config = Qwen35Config.load(configPath);
        SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(folder);
        try {
            Qwen35Weights weights = new HuggingFaceLoader(checkpoint.tensors(), config, folder.toString()).weights();
            return new Qwen35Model(config, weights, threads, checkpoint);
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
    }

    public static Qwen35Weights weights(Map<String, TensorView> tensors, Qwen35Config config, String source) {
        return new HuggingFaceLoader(tensors, config, source).weights();
    }

    private Qwen35Weights weights() {
        int h = c.hiddenSize();
        WeightMatrix embed = matrix(prefix + "embed_tokens.weight", c.vocabSize(), h);
        Qwen35Weights.DecoderLayer[] layers = new Qwen35Weights.DecoderLayer[c.numLayers()];
        for (int i = 0; i < layers.length; i++) {
            String p = prefix + "layers." + i + ".";
            Qwen35Weights.Mixer mixer = c.fullAttention()[i] ? attention(p + "self_attn.") : deltaNet(p + "linear_attn.");
            layers[i] = new Qwen35Weights.DecoderLayer(
                    zeroCentredNorm(p + "input_layernorm.weight", h),
                    mixer,
                    zeroCentredNorm(p + "post_attention_layernorm.weight", h),
                    matrix(p + "mlp.gate_proj.weight", c.intermediateSize(), h),
                    matrix(p + "mlp.up_proj.weight", c.intermediateSize(), h),
                    matrix(p + "mlp.down_proj.weight", h, c.intermediateSize()));
        }
        float[] norm = zeroCentredNorm(prefix + "norm.weight", h);
        WeightMatrix head;
        if (c.tiedEmbeddings()) {
            head = embed;
        } else {
            head = matrix("lm_head.weight", c.vocabSize(), h);
        }
        return new Qwen35Weights(embed, layers, norm, head);
    }

    private Qwen35Weights.GatedDeltaNet deltaNet(String p) {
        int h = c.hiddenSize();
        int hv = c.linearValueHeads();
        TensorView conv = tensor(p + "conv1d.weight", c.convDim(), 1, c.convKernel());
        float[] aLog = vector(p + "A_log", hv);
        float[] negA = new float[hv];
        for (int i = 0; i < hv; i++) {
            negA[i] = -(float) Math.exp(aLog[i]);
        }
        return new Qwen35Weights.GatedDeltaNet(
                matrix(p + "in_proj_qkv.weight", c.convDim(), h),
                matrix(p + "in_proj_z.weight", c.linearValueTotal(), h),
                matrix(p + "in_proj_b.weight", hv, h),
                matrix(p + "in_proj_a.weight", hv, h),
                Qwen35Weights.tapMajor(conv.toFloatArray(), c.convDim(), c.convKernel()),
                negA,
                vector(p + "dt_bias", hv),
                vector(p + "norm.weight", c.linearValueDim()),
                matrix(p + "out_proj.weight", h, c.linearValueTotal()));
    }

    private Qwen35Weights.GatedAttention attention(String p) {
        int h = c.hiddenSize();
        int hd = c.headDim();
        return new Qwen35Weights.GatedAttention(
                matrix(p + "q_proj.weight", 2 * c.numHeads() * hd, h),
                matrix(p + "k_proj.weight", c.numKvHeads() * hd, h),
                matrix(p + "v_proj.weight", c.numKvHeads() * hd, h),
                zeroCentredNorm(p + "q_norm.weight", hd),
                zeroCentredNorm(p + "k_norm.weight", hd),
                matrix(p + "o_proj.weight", h, c.numHeads() * hd));
    }

    private TensorView tensor(String name, long... shape) {
        TensorView t = tensors.get(name);
        if (t == null) {
            throw new EdgeLmException(source + ": the model needs tensor " + name + " " + Arrays.toString(shape) + ", which is missing");
        }
        if (!Arrays.equals(t.shape(), shape)) {
            throw new EdgeLmException(t.source() + ": tensor " + name + " has shape " + t.shapeString()
                    + ", expected " + Arrays.toString(shape));
        }
        return t;
    }

    private WeightMatrix matrix(String name, int rows, int cols) {
        return tensor(name, rows, cols).asMatrix();
    }

    private float[] vector(String name, int n) {
        return tensor(name, n).toFloatArray();
    }

    /** Hugging Face stores Qwen3.5's RMSNorm weights zero-centred: the multiplier is {@code 1 + w}. */
    private float[] zeroCentredNorm(String name, int n) {
        float[] w = vector(name, n);
        for (int i = 0; i < n; i++) {
            w[i] = 1f + w[i];
        }
        return w;
    }
}
