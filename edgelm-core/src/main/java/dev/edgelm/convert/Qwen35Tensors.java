package dev.edgelm.convert;

import dev.edgelm.model.Qwen35Config;
import dev.edgelm.model.Qwen35GgufLayout;
import dev.edgelm.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The tensors of a {@code qwen35} GGUF for a given config, in the order llama.cpp's converter writes them,
 * with their ggml dims and storage class. Whatever fills the file (a checkpoint, random values) walks this
 * list, so every writer produces the same names, shapes and types.
 */
public final class Qwen35Tensors {
    private Qwen35Tensors() {}

    /** How a tensor is stored: token embedding or output head, another 2-D weight matrix, or always F32. */
    public enum Storage { EMBEDDING, MATRIX, F32 }

    /** What a tensor holds; {@code suffix} is its GGUF name (after {@code blk.N.} for per-layer ones). */
    public enum Kind {
        TOKEN_EMBD(Qwen35GgufLayout.TOKEN_EMBD, Storage.EMBEDDING),
        ATTN_NORM(Qwen35GgufLayout.ATTN_NORM, Storage.F32),
        ATTN_Q(Qwen35GgufLayout.ATTN_Q, Storage.MATRIX),
        ATTN_K(Qwen35GgufLayout.ATTN_K, Storage.MATRIX),
        ATTN_V(Qwen35GgufLayout.ATTN_V, Storage.MATRIX),
        ATTN_Q_NORM(Qwen35GgufLayout.ATTN_Q_NORM, Storage.F32),
        ATTN_K_NORM(Qwen35GgufLayout.ATTN_K_NORM, Storage.F32),
        ATTN_OUTPUT(Qwen35GgufLayout.ATTN_OUTPUT, Storage.MATRIX),
        ATTN_QKV(Qwen35GgufLayout.ATTN_QKV, Storage.MATRIX),
        ATTN_GATE(Qwen35GgufLayout.ATTN_GATE, Storage.MATRIX),
        SSM_ALPHA(Qwen35GgufLayout.SSM_ALPHA, Storage.MATRIX),
        SSM_BETA(Qwen35GgufLayout.SSM_BETA, Storage.MATRIX),
        SSM_CONV1D(Qwen35GgufLayout.SSM_CONV1D, Storage.F32),
        SSM_A(Qwen35GgufLayout.SSM_A, Storage.F32),
        SSM_DT_BIAS(Qwen35GgufLayout.SSM_DT_BIAS, Storage.F32),
        SSM_NORM(Qwen35GgufLayout.SSM_NORM, Storage.F32),
        SSM_OUT(Qwen35GgufLayout.SSM_OUT, Storage.MATRIX),
        POST_ATTENTION_NORM(Qwen35GgufLayout.POST_ATTENTION_NORM, Storage.F32),
        FFN_GATE(Qwen35GgufLayout.FFN_GATE, Storage.MATRIX),
        FFN_UP(Qwen35GgufLayout.FFN_UP, Storage.MATRIX),
        FFN_DOWN(Qwen35GgufLayout.FFN_DOWN, Storage.MATRIX),
        OUTPUT_NORM(Qwen35GgufLayout.OUTPUT_NORM, Storage.F32),
        OUTPUT(Qwen35GgufLayout.OUTPUT, Storage.EMBEDDING);

        private final String suffix;
        private final Storage storage;

        Kind(String suffix, Storage storage) {
            this.suffix = suffix;
            this.storage = storage;
        }

        public Storage storage() {
            return storage;
        }
    }

    /**
     * One tensor. {@code layer} is -1 for the global ones. Dims are ggml order (row length first): a matrix
     * is {@code [cols, rows]}, a vector {@code [n]}, the conv kernel {@code [kernel, channels]}.
     */
    public record Entry(Kind kind, int layer, String name, long[] dims) {
        public Entry {
            dims = dims.clone();
        }

        @Override
        public long[] dims() {
            return dims.clone();
        }

        /** Values per row. */
        public int cols() {
            return (int) dims[0];
        }

        /** Rows: 1 for a vector. */
        public int rows() {
            return dims.length == 1 ? 1 : (int) dims[1];
        }

        /**
         * The storage type under a recipe. A matrix whose rows are not whole blocks of the recipe's type
         * gets {@link QuantRecipe#fallback()}, reported through {@code warn}.
         */
        public GgmlType type(QuantRecipe recipe, Consumer<String> warn) {
            if (kind.storage == Storage.F32) {
                return GgmlType.F32;
            }
            GgmlType type = recipe.typeFor(kind.storage == Storage.EMBEDDING);
            if (cols() % type.blockSize() != 0) {
                GgmlType fallback = QuantRecipe.fallback();
                warn.accept(name + ": row length " + cols() + " is not a multiple of the " + type + " block size "
                        + type.blockSize() + "; stored as " + fallback);
                return fallback;
            }
            return type;
        }
    }

    /** Every tensor of the text model of {@code c}, in file order; {@code output.weight} only when untied. */
    public static List<Entry> of(Qwen35Config c) {
        int h = c.hiddenSize();
        int hd = c.headDim();
        int mlp = c.intermediateSize();
        List<Entry> out = new ArrayList<>();
        out.add(matrix(Kind.TOKEN_EMBD, -1, c.vocabSize(), h));
        for (int i = 0; i < c.numLayers(); i++) {
            out.add(vector(Kind.ATTN_NORM, i, h));
            if (c.fullAttention()[i]) {
                out.add(matrix(Kind.ATTN_Q, i, 2 * c.numHeads() * hd, h));
                out.add(matrix(Kind.ATTN_K, i, c.numKvHeads() * hd, h));
                out.add(matrix(Kind.ATTN_V, i, c.numKvHeads() * hd, h));
                out.add(vector(Kind.ATTN_Q_NORM, i, hd));
                out.add(vector(Kind.ATTN_K_NORM, i, hd));
                out.add(matrix(Kind.ATTN_OUTPUT, i, h, c.numHeads() * hd));
            } else {
                int hv = c.linearValueHeads();
                out.add(matrix(Kind.ATTN_QKV, i, c.convDim(), h));
                out.add(matrix(Kind.ATTN_GATE, i, c.linearValueTotal(), h));
                out.add(matrix(Kind.SSM_ALPHA, i, hv, h));
                out.add(matrix(Kind.SSM_BETA, i, hv, h));
                out.add(new Entry(Kind.SSM_CONV1D, i, name(Kind.SSM_CONV1D, i), new long[] {c.convKernel(), c.convDim()}));
                out.add(vector(Kind.SSM_A, i, hv));
                out.add(vector(Kind.SSM_DT_BIAS, i, hv));
                out.add(vector(Kind.SSM_NORM, i, c.linearValueDim()));
                out.add(matrix(Kind.SSM_OUT, i, h, c.linearValueTotal()));
            }
            out.add(vector(Kind.POST_ATTENTION_NORM, i, h));
            out.add(matrix(Kind.FFN_GATE, i, mlp, h));
            out.add(matrix(Kind.FFN_UP, i, mlp, h));
            out.add(matrix(Kind.FFN_DOWN, i, h, mlp));
        }
        out.add(vector(Kind.OUTPUT_NORM, -1, h));
        if (!c.tiedEmbeddings()) {
            out.add(matrix(Kind.OUTPUT, -1, c.vocabSize(), h));
        }
        return out;
    }

    private static Entry matrix(Kind kind, int layer, int rows, int cols) {
        return new Entry(kind, layer, name(kind, layer), new long[] {cols, rows});
    }

    private static Entry vector(Kind kind, int layer, int n) {
        return new Entry(kind, layer, name(kind, layer), new long[] {n});
    }

    private static String name(Kind kind, int layer) {
        return layer < 0 ? kind.suffix : Qwen35GgufLayout.block(layer, kind.suffix);
    }
}
