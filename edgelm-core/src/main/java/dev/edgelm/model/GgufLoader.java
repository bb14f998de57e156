package dev.edgelm.model;

import static dev.edgelm.model.Qwen35GgufLayout.*;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.tensor.quant.WorkingCopy;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.Limits;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Builds {@link Qwen35Config} and {@link Qwen35Weights} from a GGUF file in llama.cpp's {@code qwen35}
 * layout. The file's value conventions already are the canonical ones: norms hold the effective
 * multiplier ({@code 1 + w}) except the gated {@code ssm_norm}, which is plain; {@code ssm_a} is
 * {@code -exp(A_log)}; value heads are tiled, so the config says {@code valueHeadsTiled}. GGUF dims are
 * innermost first: dims {@code [cols, rows]} are a row-major {@code [rows, cols]} matrix. An MTP block
 * ({@code nextn_predict_layers}) sits after the decoder layers and is not loaded.
 */
public final class GgufLoader {
    private final GgufFile file;
    private final Qwen35Config c;
    private final String src;
    /**
     * Whether the model owns the file (it is read by nobody else): then the matrices that make working copies of their
     * weights release the file's pages of them once copied ({@link WorkingCopy}). One matrix is built per tensor (the
     * tied head is the embedding's object), so no second reader of those bytes exists.
     */
    private final boolean owned;
    /** The matrices that make working copies (owned files only; see {@link #makeCopies}). */
    private final java.util.List<WorkingCopy> copies = new java.util.ArrayList<>();

    private GgufLoader(GgufFile file, Qwen35Config config, boolean owned) {
        this.owned = owned;
        this.file = file;
        this.c = config;
        this.src = file.source();
    }

    public static Qwen35Model load(Path path, int threads) {
        return load(GgufFile.open(path, ModelMemory.preferredMode()), threads);
    }

    /** The model of an open file, which it then owns (closed with the model, or here if loading fails). */
    public static Qwen35Model load(GgufFile file, int threads) {
        try {
            if (LOG) {
                System.err.printf(java.util.Locale.ROOT, "[load] file read, JVM uptime %.3f s%n",
                        java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1e3);
            }
            Qwen35Config config = config(file);
            GgufLoader loader = new GgufLoader(file, config, true);
            Qwen35Weights weights = loader.weights();
            loader.makeCopies(threads);
            return new Qwen35Model(config, weights, threads, file);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    public static Qwen35Config config(GgufFile file) {
        GgufMetadata m = file.metadata();
        String src = file.source();
        String arch = m.requireString("general.architecture");
        if (!arch.equals(ARCHITECTURE)) {
            throw new EdgeLmException(src + ": architecture '" + arch + "' is not supported (EdgeLM reads '" + ARCHITECTURE + "', dense Qwen3.5)");
        }
        int blocks = m.requirePositiveInt(BLOCK_COUNT);
        // every layer has at least 9 tensors (two norms, the MLP's three, four or more of its mixer)
        if (blocks > Limits.layers() || 9L * blocks > file.tensorInfos().size()) {
            throw new EdgeLmException(src + ": " + BLOCK_COUNT + " = " + blocks + " layers, but the file holds "
                    + file.tensorInfos().size() + " tensors (each layer needs at least 9)"
                    + (blocks > Limits.layers() ? " and the limit edgelm.limit.layers is " + Limits.layers() : ""));
        }
        long nextn = m.optLong(NEXTN_PREDICT_LAYERS).orElse(0L);
        if (nextn < 0 || nextn >= blocks) {
            throw new EdgeLmException(src + ": " + NEXTN_PREDICT_LAYERS + " = " + nextn + " does not fit " + BLOCK_COUNT + " = " + blocks);
        }
        int layers = blocks - (int) nextn;
        int interval = m.requirePositiveInt(FULL_ATTENTION_INTERVAL);
        boolean[] full = new boolean[layers];
        for (int i = 0; i < layers; i++) {
            full[i] = (i + 1) % interval == 0;
        }
        int hidden = dimension(m, EMBEDDING_LENGTH);
        int heads = dimension(m, HEAD_COUNT);
        int kvHeads = dimension(m, HEAD_COUNT_KV);
        int headDim = dimension(m, KEY_LENGTH);
        int valueDim = dimension(m, VALUE_LENGTH);
        Qwen35Config.checkProduct(2L * heads * headDim, "2 x " + HEAD_COUNT + " x " + KEY_LENGTH, src);
        if (valueDim != headDim) {
            throw new EdgeLmException(src + ": " + KEY_LENGTH + " (" + headDim + ") differs from " + VALUE_LENGTH + " (" + valueDim + ")");
        }
        if (heads % kvHeads != 0) {
            throw new EdgeLmException(src + ": " + HEAD_COUNT + " (" + heads + ") is not a multiple of " + HEAD_COUNT_KV + " (" + kvHeads + ")");
        }
        int rotaryDim = m.requirePositiveInt(ROPE_DIMENSION_COUNT);
        if (rotaryDim % 2 != 0 || rotaryDim > headDim) {
            throw new EdgeLmException(src + ": " + ROPE_DIMENSION_COUNT + " = " + rotaryDim + " must be even and at most the head dim " + headDim);
        }
        int[] sections = m.optIntArray(ROPE_DIMENSION_SECTIONS).map(s -> Arrays.copyOf(s, 3)).orElse(new int[] {rotaryDim / 2, 0, 0});
        long sectionSum = 0;
        for (int s : sections) {
            if (s < 0) {
                throw new EdgeLmException(src + ": " + ROPE_DIMENSION_SECTIONS + " " + Arrays.toString(sections) + " has a negative entry");
            }
            sectionSum += s;
        }
        if (sectionSum > rotaryDim / 2) {
            throw new EdgeLmException(src + ": " + ROPE_DIMENSION_SECTIONS + " " + Arrays.toString(sections) + " adds up to "
                    + sectionSum + ", more than the " + rotaryDim / 2 + " rotary frequencies");
        }
        int keyHeads = dimension(m, SSM_GROUP_COUNT);
        int valueHeads = dimension(m, SSM_TIME_STEP_RANK);
        int keyDim = dimension(m, SSM_STATE_SIZE);
        int inner = dimension(m, SSM_INNER_SIZE);
        Qwen35Config.checkProduct(2L * keyHeads * keyDim + inner, "the linear attention's conv channels", src);
        if (valueHeads % keyHeads != 0 || inner % valueHeads != 0) {
            throw new EdgeLmException(src + ": linear attention heads do not fit: " + SSM_TIME_STEP_RANK + " = " + valueHeads
                    + ", " + SSM_GROUP_COUNT + " = " + keyHeads + ", " + SSM_INNER_SIZE + " = " + inner);
        }
        GgufTensor embed = file.tensor(TOKEN_EMBD);
        if (embed == null || embed.info().nDims() != 2) {
            throw new EdgeLmException(src + ": the model needs a 2-D tensor " + TOKEN_EMBD);
        }
        long vocab = embed.info().dim(1);
        if (vocab > Integer.MAX_VALUE) {
            throw new EdgeLmException(src + ": vocabulary of " + vocab + " tokens is too large");
        }
        if (vocab < 1 || embed.info().dim(0) != hidden) {
            throw new EdgeLmException(src + ": tensor " + TOKEN_EMBD + " has dims " + Arrays.toString(embed.info().dims())
                    + ", expected [" + hidden + " (" + EMBEDDING_LENGTH + "), vocabulary size >= 1] (ggml order, row length first)");
        }
        double theta = m.requireDouble(ROPE_FREQ_BASE);
        Qwen35Config.checkRopeTheta(theta, src + ": " + ROPE_FREQ_BASE);
        double eps = m.requireDouble(RMS_EPS);
        Qwen35Config.checkRmsEps(eps, src + ": " + RMS_EPS);
        return new Qwen35Config(hidden, layers, full, heads, kvHeads, headDim, rotaryDim,
                theta, sections, keyHeads, valueHeads, keyDim, inner / valueHeads,
                m.requirePositiveInt(SSM_CONV_KERNEL), dimension(m, FEED_FORWARD_LENGTH), (int) vocab,
                (float) eps, file.tensor(OUTPUT) == null, true,
                m.optLong(GgufTokenizerData.EOS_ID).map(Long::intValue).orElse(-1));
    }

    /** A positive int within {@link Limits#dimension()}. */
    private static int dimension(GgufMetadata m, String key) {
        int v = m.requirePositiveInt(key);
        Qwen35Config.checkProduct(v, key, m.source());
        return v;
    }

    public static Qwen35Weights weights(GgufFile file, Qwen35Config config) {
        return new GgufLoader(file, config, false).weights();
    }

    private Qwen35Weights weights() {
        int h = c.hiddenSize();
        WeightMatrix embed = matrix(TOKEN_EMBD, c.vocabSize(), h);
        Qwen35Weights.DecoderLayer[] layers = new Qwen35Weights.DecoderLayer[c.numLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new Qwen35Weights.DecoderLayer(
                    vector(block(i, ATTN_NORM), h),
                    c.fullAttention()[i] ? attention(i) : deltaNet(i),
                    vector(block(i, POST_ATTENTION_NORM), h),
                    matrix(block(i, FFN_GATE), c.intermediateSize(), h),
                    matrix(block(i, FFN_UP), c.intermediateSize(), h),
                    matrix(block(i, FFN_DOWN), h, c.intermediateSize()));
        }
        WeightMatrix head = c.tiedEmbeddings() ? embed : matrix(OUTPUT, c.vocabSize(), h);
        if (!c.tiedEmbeddings() && embed instanceof WorkingCopy w) {
            copies.remove(w); // only looked up: its rows are decoded from the file, no copy needed
        }
        return new Qwen35Weights(embed, layers, vector(OUTPUT_NORM, h), head);
    }

    private Qwen35Weights.GatedDeltaNet deltaNet(int i) {
        int h = c.hiddenSize();
        int hv = c.linearValueHeads();
        return new Qwen35Weights.GatedDeltaNet(
                matrix(block(i, ATTN_QKV), c.convDim(), h),
                matrix(block(i, ATTN_GATE), c.linearValueTotal(), h),
                matrix(block(i, SSM_BETA), hv, h),
                matrix(block(i, SSM_ALPHA), hv, h),
                Qwen35Weights.tapMajor(tensor(block(i, SSM_CONV1D), c.convKernel(), c.convDim()).toFloatArray(),
                        c.convDim(), c.convKernel()),
                vector(block(i, SSM_A), hv),
                vector(block(i, SSM_DT_BIAS), hv),
                vector(block(i, SSM_NORM), c.linearValueDim()),
                matrix(block(i, SSM_OUT), h, c.linearValueTotal()));
    }

    private Qwen35Weights.GatedAttention attention(int i) {
        int h = c.hiddenSize();
        int hd = c.headDim();
        return new Qwen35Weights.GatedAttention(
                matrix(block(i, ATTN_Q), 2 * c.numHeads() * hd, h),
                matrix(block(i, ATTN_K), c.numKvHeads() * hd, h),
                matrix(block(i, ATTN_V), c.numKvHeads() * hd, h),
                vector(block(i, ATTN_Q_NORM), hd),
                vector(block(i, ATTN_K_NORM), hd),
                matrix(block(i, ATTN_OUTPUT), h, c.numHeads() * hd));
    }

    /** The tensor with ggml dims {@code dims} (innermost first). */
    private GgufTensor tensor(String name, long... dims) {
        GgufTensor t = file.tensor(name);
        if (t == null) {
            throw new EdgeLmException(src + ": the model needs tensor " + name + " " + Arrays.toString(dims) + ", which is missing");
        }
        if (!Arrays.equals(t.info().dims(), dims)) {
            throw new EdgeLmException(src + ": tensor " + name + " has dims " + Arrays.toString(t.info().dims())
                    + ", expected " + Arrays.toString(dims) + " (ggml order, row length first)");
        }
        return t;
    }

    /** The multiplied tensors' working copies, made on all threads at once right after loading. */
    private void makeCopies(int threads) {
        if (!copies.isEmpty()) {
            java.util.Map<String, long[]> spent = new java.util.TreeMap<>();
            long start = System.nanoTime();
            try (Parallel pool = new Parallel(threads)) {
                for (WorkingCopy w : copies) {
                    long t = System.nanoTime();
                    w.makeCopy(pool);
                    if (LOG) {
                        long[] s = spent.computeIfAbsent(w.getClass().getSimpleName(), k -> new long[2]);
                        s[0] += System.nanoTime() - t;
                        s[1]++;
                    }
                }
            }
            if (LOG) {
                System.err.printf(java.util.Locale.ROOT, "[load] working copies %.3f s on %d threads, JVM uptime %.3f s%n",
                        (System.nanoTime() - start) / 1e9, threads,
                        java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1e3);
                spent.forEach((k, s) -> System.err.printf(java.util.Locale.ROOT, "[load]   %s: %d copies, %.3f s%n",
                        k, s[1], s[0] / 1e9));
            }
        }
    }

    /** {@code edgelm.load.log}: the load's stages on standard error (how long the working copies took, by kind). */
    private static final boolean LOG = Boolean.getBoolean("edgelm.load.log");

    private WeightMatrix matrix(String name, int rows, int cols) {
        WeightMatrix m = tensor(name, cols, rows).asMatrix();
        if (owned && m instanceof WorkingCopy w) {
            w.releaseFileAfterCopy();
            copies.add(w);
        }
        return m;
    }

    private float[] vector(String name, int n) {
        return tensor(name, n).toFloatArray();
    }
}
