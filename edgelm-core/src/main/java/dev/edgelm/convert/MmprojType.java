package dev.edgelm.convert;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.util.Locale;

/**
 * The storage of a vision projector file's encoder matrices ({@code --mmproj-type}), after llama.cpp's
 * converter at the same {@code --outtype}: F16 (its default for mmproj files), BF16 or F32.
 */
public enum MmprojType {
    F16(GgmlType.F16, 1),
    BF16(GgmlType.BF16, 32),
    F32(GgmlType.F32, 0);

    private final GgmlType type;
    private final int fileType;

    MmprojType(GgmlType type, int fileType) {
        this.type = type;
        this.fileType = fileType;
    }

    /** The type of the encoder's 2-D weight matrices. */
    public GgmlType matrixType() {
        return type;
    }

    /** The patch-embedding kernel: F16 in an F16 file, else F32 (llama.cpp's rule; its conv needs F16 or F32). */
    public GgmlType patchType() {
        return this == F16 ? GgmlType.F16 : GgmlType.F32;
    }

    /** llama.cpp's {@code general.file_type} (LLAMA_FTYPE_ALL_F32 0, MOSTLY_F16 1, MOSTLY_BF16 32). */
    public int fileType() {
        return fileType;
    }

    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static MmprojType parse(String s) {
        for (MmprojType t : values()) {
            if (t.cliName().equals(s.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new EdgeLmException("--mmproj-type: '" + s + "' is not one of f16, bf16, f32");
    }
}
