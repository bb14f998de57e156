package dev.edgelm.model;

import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opens a model from what a user names: a Hugging Face checkpoint folder or a {@code .gguf} file. */
public final class ModelLoader {
    private ModelLoader() {}

    public static Qwen35Model load(Path path, int threads) {
        if (Files.isDirectory(path)) {
            return HuggingFaceLoader.load(path, threads);
        }
        if (!Files.exists(path)) {
            throw new EdgeLmException(path + ": no such file or folder");
        }
        if (path.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf")) {
            return GgufLoader.load(path, threads);
        }
        throw new EdgeLmException(path + ": not a model (expected a Hugging Face checkpoint folder or a .gguf file)");
    }
}
