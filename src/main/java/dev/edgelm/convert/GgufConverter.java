package dev.edgelm.convert;

import static dev.edgelm.model.Qwen35GgufLayout.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
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
 * checkpoint into the output, so memory stays bounded whatever the model size. The output appears only
 * when complete (see {@link GgufWriter}).
 */
public final class GgufConverter {

    /** Observes progress: called after each tensor and periodically within large ones. */
    public interface Progress {
        void update(String tensor, long bytesDone, long bytesTotal);
    }

    /** What was written. */
    public record Result(Path output, long bytes, int tensors, Map<GgmlType, Integer> typeCounts, boolean tokenizer) {}

    /** One row of a tensor to write, as float32, with every transform applied. */
    private interface RowSource {
        int rows();

        int cols();

        void row(int r, float[] dst);
    }

    private record Planned(String name, long[] dims, GgmlType type, RowSource source) {}

    private static final long PROGRESS_STEP_BYTES = 8L << 20;

    private final Path folder;
    private final QuantRecipe recipe;
    private final Consumer<String> warn;
    private final Qwen35Config c;
    private final Map<String, TensorView> tensors;
    private final String prefix;
    private final List<Planned> plan = new ArrayList<>();

    private GgufConverter(Path folder, QuantRecipe recipe, Consumer<String> warn, Qwen35Config config, Map<String, TensorView> tensors) {
        this.folder = folder;
        this.recipe = recipe;
        this.warn = warn;
        this.c = config;
        this.tensors = tensors;
        this.prefix = tensors.containsKey("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
    }

    public static Result convert(Path folder, Path output, QuantRecipe recipe, Consumer<String> warn, Progress progress) {
        Path configPath = folder.resolve("config.json");
        if (!Files.isDirectory(folder) || !Files.isRegularFile(configPath)) {
            throw new EdgeLmException(folder + ": not a checkpoint folder (no config.json)");
        }
        Qwen35Config config = Qwen35Config.load(configPath);
        try (SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(folder)) {
            GgufConverter conv = new GgufConverter(folder, recipe, warn, config, checkpoint.tensors());
            conv.planTensors();
            Map<String, GgufValue> meta = new LinkedHashMap<>();
            boolean hasTokenizer = conv.metadata(meta, readJson(configPath));
            return conv.write(output, meta, progress, hasTokenizer);
        }
    }

    private Result write(Path output, Map<String, GgufValue> meta, Progress progress, boolean hasTokenizer) {
        List<GgufWriter.TensorSpec> specs = plan.stream().map(p -> new GgufWriter.TensorSpec(p.name, p.dims, p.type)).toList();
        Map<GgmlType, Integer> counts = new EnumMap<>(GgmlType.class);
        try (GgufWriter w = GgufWriter.create(output, meta, specs)) {
            long total = w.totalBytes();
            long lastReport = 0;
            for (Planned p : plan) {
                RowSource src = p.source;
                int cols = src.cols();
                float[] row = new float[cols];
                byte[] bytes = new byte[(int) p.type.byteSize(cols)];
                MemorySegment seg = MemorySegment.ofArray(bytes);
                for (int r = 0; r < src.rows(); r++) {
                    src.row(r, row);
                    RowEncoder.encode(p.type, row, cols, seg);
                    w.write(bytes, 0, bytes.length);
                    if (progress != null && w.bytesWritten() - lastReport >= PROGRESS_STEP_BYTES) {
                        lastReport = w.bytesWritten();
                        progress.update(p.name, lastReport, total);
                    }
                }
                counts.merge(p.type, 1, Integer::sum);
                if (progress != null) {
                    progress.update(p.name, w.bytesWritten(), total);
                }
            }
            w.finish();
            return new Result(output, total, plan.size(), counts, hasTokenizer);
        }
    }

    // ---- metadata ----

    /** Fills the metadata; returns whether a tokenizer was found. */
    private boolean metadata(Map<String, GgufValue> meta, JsonNode configJson) {
        JsonNode text = configJson.has("text_config") ? configJson.get("text_config") : configJson;
        meta.put("general.architecture", GgufValue.string(ARCHITECTURE));
        meta.put("general.type", GgufValue.string("model"));
        meta.put("general.name", GgufValue.string(folder.toAbsolutePath().normalize().getFileName().toString()));
        meta.put("general.file_type", GgufValue.u32(recipe.fileType()));
        if (recipe != QuantRecipe.BF16) {
            meta.put("general.quantization_version", GgufValue.u32(2));
        }
        meta.put(BLOCK_COUNT, GgufValue.u32(c.numLayers()));
        long context = text.path("max_position_embeddings").asLong(0);
        if (context <= 0) {
            context = 262144;
            warn.accept("config.json has no max_position_embeddings; writing context_length " + context);
        }
        meta.put(CONTEXT_LENGTH, GgufValue.u32(context));
        meta.put(EMBEDDING_LENGTH, GgufValue.u32(c.hiddenSize()));
        meta.put(FEED_FORWARD_LENGTH, GgufValue.u32(c.intermediateSize()));
        meta.put(HEAD_COUNT, GgufValue.u32(c.numHeads()));
        meta.put(HEAD_COUNT_KV, GgufValue.u32(c.numKvHeads()));
        long[] sections = new long[4];
        for (int i = 0; i < Math.min(3, c.mropeSection().length); i++) {
            sections[i] = c.mropeSection()[i];
        }
        meta.put(ROPE_DIMENSION_SECTIONS, GgufValue.integerArray(dev.edgelm.format.gguf.GgufValueType.INT32, sections));
        meta.put(ROPE_FREQ_BASE, GgufValue.f32((float) c.ropeTheta()));
        meta.put(RMS_EPS, GgufValue.f32(c.rmsNormEps()));
        meta.put(KEY_LENGTH, GgufValue.u32(c.headDim()));
        meta.put(VALUE_LENGTH, GgufValue.u32(c.headDim()));
        meta.put(SSM_CONV_KERNEL, GgufValue.u32(c.convKernel()));
        meta.put(SSM_STATE_SIZE, GgufValue.u32(c.linearKeyDim()));
        meta.put(SSM_GROUP_COUNT, GgufValue.u32(c.linearKeyHeads()));
        meta.put(SSM_TIME_STEP_RANK, GgufValue.u32(c.linearValueHeads()));
        meta.put(SSM_INNER_SIZE, GgufValue.u32(c.linearValueTotal()));
        meta.put(FULL_ATTENTION_INTERVAL, GgufValue.u32(fullAttentionInterval()));
        meta.put(ROPE_DIMENSION_COUNT, GgufValue.u32(c.rotaryDim()));
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
        return tokenizer.isPresent();
    }

    /** llama.cpp only knows periodic layouts: full attention at every interval-th layer. */
    private int fullAttentionInterval() {
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
                throw new EdgeLmException(folder + ": layer_types " + c.layerPattern()
                        + " are not periodic; the qwen35 GGUF layout needs full attention every N-th layer");
            }
        }
        return interval;
    }

    // ---- tensors ----

    private void planTensors() {
        int h = c.hiddenSize();
        WeightMatrix embed = source(prefix + "embed_tokens.weight", c.vocabSize(), h).asMatrix();
        matrix(TOKEN_EMBD, embed, true, IntUnaryOperator.identity(), null);
        for (int i = 0; i < c.numLayers(); i++) {
            String p = prefix + "layers." + i + ".";
            vector(block(i, ATTN_NORM), plusOne(vec(p + "input_layernorm.weight", h)));
            if (c.fullAttention()[i]) {
                attention(i, p + "self_attn.");
            } else {
                deltaNet(i, p + "linear_attn.");
            }
            vector(block(i, POST_ATTENTION_NORM), plusOne(vec(p + "post_attention_layernorm.weight", h)));
            matrix(block(i, FFN_GATE), mat(p + "mlp.gate_proj.weight", c.intermediateSize(), h));
            matrix(block(i, FFN_UP), mat(p + "mlp.up_proj.weight", c.intermediateSize(), h));
            matrix(block(i, FFN_DOWN), mat(p + "mlp.down_proj.weight", h, c.intermediateSize()));
        }
        vector(OUTPUT_NORM, plusOne(vec(prefix + "norm.weight", h)));
        if (!c.tiedEmbeddings()) {
            matrix(OUTPUT, mat("lm_head.weight", c.vocabSize(), h), true, IntUnaryOperator.identity(), null);
        }
        long skipped = tensors.keySet().stream().filter(n -> n.startsWith("mtp.") || n.startsWith("model.visual.")).count();
        if (skipped > 0) {
            warn.accept("skipping " + skipped + " mtp.* / model.visual.* tensors (multi-token prediction and vision are not part of the text model file)");
        }
    }

    private void attention(int i, String p) {
        int h = c.hiddenSize();
        int hd = c.headDim();
        matrix(block(i, ATTN_Q), mat(p + "q_proj.weight", 2 * c.numHeads() * hd, h));
        matrix(block(i, ATTN_K), mat(p + "k_proj.weight", c.numKvHeads() * hd, h));
        matrix(block(i, ATTN_V), mat(p + "v_proj.weight", c.numKvHeads() * hd, h));
        vector(block(i, ATTN_Q_NORM), plusOne(vec(p + "q_norm.weight", hd)));
        vector(block(i, ATTN_K_NORM), plusOne(vec(p + "k_norm.weight", hd)));
        matrix(block(i, ATTN_OUTPUT), mat(p + "o_proj.weight", h, c.numHeads() * hd));
    }

    /** Linear attention, with the value heads moved from grouped (Hugging Face) to tiled (llama.cpp) order. */
    private void deltaNet(int i, String p) {
        int h = c.hiddenSize();
        int hv = c.linearValueHeads();
        int dv = c.linearValueDim();
        int qk = 2 * c.linearKeyTotal();
        IntUnaryOperator head = q -> hfValueHeadAt(q, c.linearKeyHeads(), hv);
        IntUnaryOperator valueChannel = ch -> head.applyAsInt(ch / dv) * dv + ch % dv;
        IntUnaryOperator qkvRow = r -> r < qk ? r : qk + valueChannel.applyAsInt(r - qk);
        matrix(block(i, ATTN_QKV), mat(p + "in_proj_qkv.weight", c.convDim(), h), false, qkvRow, null);
        matrix(block(i, ATTN_GATE), mat(p + "in_proj_z.weight", c.linearValueTotal(), h), false, valueChannel, null);
        matrix(block(i, SSM_ALPHA), mat(p + "in_proj_a.weight", hv, h), false, head, null);
        matrix(block(i, SSM_BETA), mat(p + "in_proj_b.weight", hv, h), false, head, null);
        WeightMatrix conv = source(p + "conv1d.weight", c.convDim(), 1, c.convKernel()).asMatrix();
        plan.add(new Planned(block(i, SSM_CONV1D), new long[] {c.convKernel(), c.convDim()}, GgmlType.F32,
                rows(conv, qkvRow, null)));
        float[] aLog = vec(p + "A_log", hv);
        float[] negA = new float[hv];
        for (int j = 0; j < hv; j++) {
            negA[j] = -(float) Math.exp(aLog[j]);
        }
        vector(block(i, SSM_A), permute(negA, head));
        vector(block(i, SSM_DT_BIAS), permute(vec(p + "dt_bias", hv), head));
        vector(block(i, SSM_NORM), vec(p + "norm.weight", dv));
        int[] outCols = new int[c.linearValueTotal()];
        for (int col = 0; col < outCols.length; col++) {
            outCols[col] = valueChannel.applyAsInt(col);
        }
        matrix(block(i, SSM_OUT), mat(p + "out_proj.weight", h, c.linearValueTotal()), false, IntUnaryOperator.identity(), outCols);
    }

    private void matrix(String name, WeightMatrix src) {
        matrix(name, src, false, IntUnaryOperator.identity(), null);
    }

    /**
     * A weight matrix: GGUF row r is source row {@code rowMap(r)}; column j is source column
     * {@code colMap[j]} when given. The type follows the recipe, or the fallback when rows are not whole blocks.
     */
    private void matrix(String name, WeightMatrix src, boolean embedding, IntUnaryOperator rowMap, int[] colMap) {
        GgmlType type = recipe.typeFor(embedding);
        if (src.cols() % type.blockSize() != 0) {
            GgmlType fallback = QuantRecipe.fallback();
            warn.accept(name + ": row length " + src.cols() + " is not a multiple of the " + type + " block size "
                    + type.blockSize() + "; stored as " + fallback);
            type = fallback;
        }
        plan.add(new Planned(name, new long[] {src.cols(), src.rows()}, type, rows(src, rowMap, colMap)));
    }

    private static RowSource rows(WeightMatrix src, IntUnaryOperator rowMap, int[] colMap) {
        return new RowSource() {
            private final float[] tmp = colMap == null ? null : new float[src.cols()];

            public int rows() {
                return src.rows();
            }

            public int cols() {
                return src.cols();
            }

            public void row(int r, float[] dst) {
                if (colMap == null) {
                    src.decodeRow(rowMap.applyAsInt(r), dst, 0);
                    return;
                }
                src.decodeRow(rowMap.applyAsInt(r), tmp, 0);
                for (int j = 0; j < colMap.length; j++) {
                    dst[j] = tmp[colMap[j]];
                }
            }
        };
    }

    /** A small F32 tensor. */
    private void vector(String name, float[] values) {
        plan.add(new Planned(name, new long[] {values.length}, GgmlType.F32, new RowSource() {
            public int rows() {
                return 1;
            }

            public int cols() {
                return values.length;
            }

            public void row(int r, float[] dst) {
                System.arraycopy(values, 0, dst, 0, values.length);
            }
        }));
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

    private WeightMatrix mat(String name, int rows, int cols) {
        return source(name, rows, cols).asMatrix();
    }

    private float[] vec(String name, int n) {
        return source(name, n).toFloatArray();
    }

    private static JsonNode readJson(Path p) {
        try {
            return new ObjectMapper().readTree(Files.readString(p));
        } catch (IOException e) {
            throw new EdgeLmException(p + ": cannot read or parse: " + e.getMessage());
        }
    }
}
