package dev.edgelm.convert;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * A downloaded checkpoint converted once into an int8 GGUF file inside its own folder
 * ({@value #FILE_NAME}) and reused afterwards: a quarter of the BF16 weights' memory traffic per token, and
 * the tokenizer, template and generation defaults travel with it. The file appears only when complete.
 */
public final class SnapshotGguf {
    public static final String FILE_NAME = "edgelm-int8.gguf";

    private SnapshotGguf() {}

    /** The converted file of {@code checkpoint}, converting it first if it is not there yet. */
    public static Path int8(Path checkpoint, Consumer<String> warn, RowStreamWriter.Progress progress) {
        Path gguf = checkpoint.resolve(FILE_NAME);
        if (!Files.isRegularFile(gguf)) {
            GgufConverter.convert(checkpoint, gguf, QuantRecipe.INT8, warn, progress);
        }
        return gguf;
    }
}
