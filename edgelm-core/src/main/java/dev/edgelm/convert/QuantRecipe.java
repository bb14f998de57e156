package dev.edgelm.convert;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.util.Locale;

/**
 * Which ggml type each 2-D weight matrix gets, after the released on-device bundles of Qwen3.5. Small
 * tensors (norms, {@code ssm_a}, {@code ssm_dt.bias}, the conv kernel) are F32 under every recipe.
 */
public enum QuantRecipe {
    /** Every matrix BF16, as released. */
    BF16(GgmlType.BF16, GgmlType.BF16, 32),
    /** Q8_0 on every matrix, the token embedding included. */
    INT8(GgmlType.Q8_0, GgmlType.Q8_0, 7),
    /** "Mixed int4": Q4_0 on the linear layers, Q8_0 on the token embedding and the output head. */
    INT4(GgmlType.Q4_0, GgmlType.Q8_0, 2);

    private final GgmlType linear;
    private final GgmlType embeddings;
    private final int fileType;

    QuantRecipe(GgmlType linear, GgmlType embeddings, int fileType) {
        this.linear = linear;
        this.embeddings = embeddings;
        this.fileType = fileType;
    }

    /** The type for a matrix: {@code embedding} for the token embedding and the output head. */
    public GgmlType typeFor(boolean embedding) {
        return embedding ? embeddings : linear;
    }

    /** Used when a matrix's row length is not a whole number of blocks of the recipe's type. */
    public static GgmlType fallback() {
        return GgmlType.BF16;
    }

    /** llama.cpp's {@code general.file_type} (LLAMA_FTYPE_MOSTLY_*) for the recipe's main type. */
    public int fileType() {
        return fileType;
    }

    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static QuantRecipe parse(String s) {
        for (QuantRecipe r : values()) {
            if (r.cliName().equals(s.toLowerCase(Locale.ROOT))) {
                return r;
            }
        }
        throw new EdgeLmException("--quant: '" + s + "' is not one of bf16, int8, int4");
    }
}
