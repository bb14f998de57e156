package dev.edgelm.convert;

import static dev.edgelm.model.Qwen35GgufLayout.VOCAB_SIZE;
import static dev.edgelm.model.Qwen35GgufLayout.hfValueHeadAt;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.convert.Qwen35Tensors.Entry;
import dev.edgelm.convert.RowStreamWriter.Planned;
import dev.edgelm.convert.RowStreamWriter.RowSource;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerJson;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;

/**
 * Converts a Hugging Face Qwen3.5 checkpoint folder into one GGUF file in llama.cpp's {@code qwen35}
 * layout: weights (renamed, with llama.cpp's value conventions: norms {@code 1 + w} except the gated
 * {@code ssm_norm}, {@code ssm_a = -exp(A_log)}, the conv squeezed to 2-D, value heads tiled), the
 * tokenizer, the chat template and the generation defaults.
 *
 * <p>Streaming: tensors are transformed and encoded one row at a time straight from the mapped
 * checkpoint into the output (see {@link RowStreamWriter}), so memory stays bounded whatever the model
 * size. The output appears only when complete.
 */
public final class GgufConverter {

    /** What was written. */
    public record Result(Path output, long bytes, int tensors, Map<GgmlType, Integer> typeCounts, boolean tokenizer) {}

    private final Path folder;
    private final QuantRecipe recipe;
    private final Consumer<String> warn;
    private final Qwen35Config c;
    private final Map<String, TensorView> tensors;
    private final String prefix;
    /** GGUF value head (tiled order) to Hugging Face value head (grouped order). */
    private final IntUnaryOperator head;
    /** The same for value channels (head x value dim). */
    private final IntUnaryOperator valueChannel;
    /** GGUF row of {@code attn_qkv} (and channel of the conv) to Hugging Face row: q and k as is, v permuted. */
    private final IntUnaryOperator qkvRow;

    private GgufConverter(Path folder, QuantRecipe recipe, Consumer<String> warn, Qwen35Config config, Map<String, TensorView> tensors) {
        this.folder = folder;
        this.recipe = recipe;
        this.warn = warn;
        this.c = config;
        this.tensors = tensors;
        this.prefix = tensors.containsKey("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
        int dv = c.linearValueDim();
        int qk = 2 * c.linearKeyTotal();
        this.head = q -> hfValueHeadAt(q, c.linearKeyHeads(), c.linearValueHeads());
        this.valueChannel = ch -> head.applyAsInt(ch / dv) * dv + ch % dv;
        this.qkvRow = r -> r < qk ? r : qk + valueChannel.applyAsInt(r - qk);
    }

    public static Result convert(Path folder, Path output, QuantRecipe recipe, Consumer<String> warn, RowStreamWriter.Progress progress) {
        Path configPath = folder.resolve("config.json");
        if (!Files.isDirectory(folder) || !Files.isRegularFile(configPath)) {
            throw new EdgeLmException(folder + ": not a checkpoint folder (no config.json)");
        }
        JsonNode configJson = HfTokenizerFiles.readJson(configPath);
        Qwen35Config config = Qwen35Config.fromJson(configJson, configPath.toString());
        try (SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(folder)) {
            GgufConverter conv = new GgufConverter(folder, recipe, warn, config, checkpoint.tensors());
            List<Planned> plan = conv.plan();
            Map<String, GgufValue> meta = new LinkedHashMap<>();
            boolean hasTokenizer = conv.metadata(meta, configJson);
            RowStreamWriter.Result r = RowStreamWriter.write(output, meta, plan, progress, 1);
            return new Result(r.output(), r.bytes(), r.tensors(), r.typeCounts(), hasTokenizer);
        }
    }

    // ---- metadata ----

    /** Fills the metadata; returns whether a tokenizer was found. */
    private boolean metadata(Map<String, GgufValue> meta, JsonNode configJson) {
        JsonNode text = configJson.has("text_config") ? configJson.get("text_config") : configJson;
        long context = text.path("max_position_embeddings").asLong(0);
        if (context <= 0) {
            context = 262144;
            warn.accept("config.json has no max_position_embeddings; writing context_length " + context);
        }
        Qwen35Metadata.put(meta, c, recipe, folder.toAbsolutePath().normalize().getFileName().toString(), context, folder.toString());
        Optional<GgufTokenizerData> tokenizer = HfTokenizerFiles.read(folder, c.vocabSize());
        if (tokenizer.isPresent()) {
            tokenizer.get().writeTo(meta);
        } else {
            warn.accept(folder + " has no tokenizer.json: the GGUF gets no tokenizer (token ids only)");
            meta.put(GgufTokenizerData.MODEL, GgufValue.string("none"));
            meta.put(VOCAB_SIZE, GgufValue.u32(c.vocabSize()));
        }
        GenerationDefaults generation = HfTokenizerFiles.generationDefaults(folder);
        generation.writeTo(meta);
        if (tokenizer.isPresent()) {
            // the same rules as the loaders: the folder's files as a checkpoint is read, the metadata as a GGUF is
            validate(TokenizerJson.load(folder.resolve("tokenizer.json")), meta);
        }
        return tokenizer.isPresent();
    }

    /** Sample text in which a tokenizer written differently shows: words, digits, accents, CJK, emoji, spaces, specials. */
    private static final String PROBE = "Hello, world! It's 2026: 12345 + 0.5 = ok?\n\n  indented\tcafé naïve Ångström "
            + "日本語のテキスト 中文 한국어 😀👍🏽 \u00e9 (e\u0301) <|im_start|>user\nhi<|im_end|>\n<think>\n</think>";

    /**
     * Refuses metadata the runtime would refuse or read differently: it is read back with {@link ChatFormat#read}
     * (tokenizer, stop tokens, chat template), and its tokenizer must encode a probe text as the checkpoint's
     * {@code tokenizer.json} does.
     */
    private void validate(Tokenizer hf, Map<String, GgufValue> meta) {
        String where = folder + " (as it would be converted)";
        ChatFormat gguf;
        try {
            gguf = ChatFormat.read(new GgufMetadata(meta, where)).orElseThrow();
        } catch (EdgeLmException e) {
            throw new EdgeLmException("the converted file would not load: " + e.getMessage());
        }
        if (gguf.tokenizer().normalization() != hf.normalization()) {
            throw new EdgeLmException(folder.resolve("tokenizer.json") + ": normalizer " + hf.normalization()
                    + " cannot be written to a GGUF file (which records none; its pre-tokenizer implies "
                    + gguf.tokenizer().normalization() + ")");
        }
        int[] expected = hf.encode(PROBE);
        int[] actual = gguf.tokenizer().encode(PROBE);
        if (!Arrays.equals(expected, actual)) {
            throw new EdgeLmException(folder.resolve("tokenizer.json") + ": this tokenizer cannot be written to a GGUF file "
                    + "as it is: the converted file would encode text differently (" + actual.length + " tokens instead of "
                    + expected.length + " for a sample text)");
        }
    }

    // ---- tensors ----

    private List<Planned> plan() {
        List<Planned> plan = new ArrayList<>();
        for (Entry e : Qwen35Tensors.of(c)) {
            plan.add(new Planned(e, e.type(recipe, warn), source(e)));
        }
        long skipped = tensors.keySet().stream().filter(n -> n.startsWith("mtp.") || n.startsWith("model.visual.")).count();
        if (skipped > 0) {
            warn.accept("skipping " + skipped + " mtp.* / model.visual.* tensors (multi-token prediction and vision are not part of the text model file)");
        }
        return plan;
    }

    /** Where the rows of a GGUF tensor come from in the checkpoint, with llama.cpp's value conventions applied. */
    private RowSource source(Entry e) {
        String layer = prefix + "layers." + e.layer() + ".";
        String attn = layer + "self_attn.";
        String linear = layer + "linear_attn.";
        return switch (e.kind()) {
            case TOKEN_EMBD -> rows(matrix(prefix + "embed_tokens.weight", e));
            case OUTPUT -> rows(matrix("lm_head.weight", e));
            case OUTPUT_NORM -> vector(plusOne(vec(prefix + "norm.weight", e)));
            case ATTN_NORM -> vector(plusOne(vec(layer + "input_layernorm.weight", e)));
            case POST_ATTENTION_NORM -> vector(plusOne(vec(layer + "post_attention_layernorm.weight", e)));
            case FFN_GATE -> rows(matrix(layer + "mlp.gate_proj.weight", e));
            case FFN_UP -> rows(matrix(layer + "mlp.up_proj.weight", e));
            case FFN_DOWN -> rows(matrix(layer + "mlp.down_proj.weight", e));
            case ATTN_Q -> rows(matrix(attn + "q_proj.weight", e));
            case ATTN_K -> rows(matrix(attn + "k_proj.weight", e));
            case ATTN_V -> rows(matrix(attn + "v_proj.weight", e));
            case ATTN_Q_NORM -> vector(plusOne(vec(attn + "q_norm.weight", e)));
            case ATTN_K_NORM -> vector(plusOne(vec(attn + "k_norm.weight", e)));
            case ATTN_OUTPUT -> rows(matrix(attn + "o_proj.weight", e));
            // linear attention: value heads move from grouped (Hugging Face) to tiled (llama.cpp) order
            case ATTN_QKV -> rows(matrix(linear + "in_proj_qkv.weight", e), qkvRow, null);
            case ATTN_GATE -> rows(matrix(linear + "in_proj_z.weight", e), valueChannel, null);
            case SSM_ALPHA -> rows(matrix(linear + "in_proj_a.weight", e), head, null);
            case SSM_BETA -> rows(matrix(linear + "in_proj_b.weight", e), head, null);
            case SSM_CONV1D -> rows(source(linear + "conv1d.weight", e.rows(), 1, e.cols()).asMatrix(), qkvRow, null);
            case SSM_A -> {
                float[] aLog = vec(linear + "A_log", e);
                float[] negA = new float[aLog.length];
                for (int j = 0; j < negA.length; j++) {
                    negA[j] = -(float) Math.exp(aLog[j]);
                }
                yield vector(permute(negA, head));
            }
            case SSM_DT_BIAS -> vector(permute(vec(linear + "dt_bias", e), head));
            case SSM_NORM -> vector(vec(linear + "norm.weight", e));
            case SSM_OUT -> {
                int[] outCols = new int[e.cols()];
                for (int col = 0; col < outCols.length; col++) {
                    outCols[col] = valueChannel.applyAsInt(col);
                }
                yield rows(matrix(linear + "out_proj.weight", e), IntUnaryOperator.identity(), outCols);
            }
        };
    }

    private static RowSource rows(WeightMatrix src) {
        return rows(src, IntUnaryOperator.identity(), null);
    }

    /** GGUF row r is source row {@code rowMap(r)}; column j is source column {@code colMap[j]} when given. */
    private static RowSource rows(WeightMatrix src, IntUnaryOperator rowMap, int[] colMap) {
        if (colMap == null) {
            return (r, dst) -> src.decodeRow(rowMap.applyAsInt(r), dst, 0);
        }
        float[] tmp = new float[src.cols()]; // the converter writes with one thread
        return (r, dst) -> {
            src.decodeRow(rowMap.applyAsInt(r), tmp, 0);
            for (int j = 0; j < colMap.length; j++) {
                dst[j] = tmp[colMap[j]];
            }
        };
    }

    /** A small F32 tensor: one row. */
    private static RowSource vector(float[] values) {
        return (r, dst) -> System.arraycopy(values, 0, dst, 0, values.length);
    }

    private static float[] plusOne(float[] w) {
        for (int i = 0; i < w.length; i++) {
            w[i] = 1f + w[i];
        }
        return w;
    }

    private static float[] permute(float[] v, IntUnaryOperator from) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[from.applyAsInt(i)];
        }
        return out;
    }

    private TensorView source(String name, long... shape) {
        TensorView t = tensors.get(name);
        if (t == null) {
            throw new EdgeLmException(folder + ": the model needs tensor " + name + " " + Arrays.toString(shape) + ", which is missing");
        }
        if (!Arrays.equals(t.shape(), shape)) {
            throw new EdgeLmException(t.source() + ": tensor " + name + " has shape " + t.shapeString() + ", expected " + Arrays.toString(shape));
        }
        return t;
    }

    /** The checkpoint matrix of a GGUF matrix entry (same rows and columns). */
    private WeightMatrix matrix(String name, Entry e) {
        return source(name, e.rows(), e.cols()).asMatrix();
    }

    /** The checkpoint vector of a GGUF vector entry. */
    private float[] vec(String name, Entry e) {
        return source(name, e.cols()).toFloatArray();
    }
}
