package dev.edgelm.convert;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * A downloaded checkpoint converted once into a GGUF file inside its own folder ({@code edgelm-<recipe>.gguf},
 * e.g. {@value #FILE_NAME}) and reused afterwards. int8 is what {@code edgelm run} uses for a download: a
 * quarter of the BF16 weights' memory traffic per token, and the tokenizer, template and generation defaults
 * travel with it. The file appears only when complete.
 */
public final class SnapshotGguf {
    public static final String FILE_NAME = "edgelm-int8.gguf";

    private SnapshotGguf() {}

    /** {@code edgelm-int8.gguf}, {@code edgelm-int4.gguf}, {@code edgelm-bf16.gguf}. */
    public static String fileName(QuantRecipe recipe) {
        return "edgelm-" + recipe.cliName() + ".gguf";
    }

    /** The converted file of {@code checkpoint}, converting it first if it is not there yet. */
    public static Path int8(Path checkpoint, Consumer<String> warn, RowStreamWriter.Progress progress) {
        return of(checkpoint, QuantRecipe.INT8, warn, progress);
    }

    /** The {@code recipe} file of {@code checkpoint}, converting it first if it is not there yet. */
    public static Path of(Path checkpoint, QuantRecipe recipe, Consumer<String> warn, RowStreamWriter.Progress progress) {
        Path gguf = checkpoint.resolve(fileName(recipe));
        if (!Files.isRegularFile(gguf)) {
            GgufConverter.convert(checkpoint, gguf, recipe, warn, progress);
        }
        return gguf;
    }
}
