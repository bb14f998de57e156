package dev.edgelm.model;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.VectorSupport;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opens a model from what a user names: a Hugging Face checkpoint folder or a {@code .gguf} file. */
public final class ModelLoader {
    private ModelLoader() {}

    /**
     * A loaded model and, for a GGUF file, the metadata of its header (null for a checkpoint folder), so that
     * what else the file carries (generation defaults) is read from the same parse.
     */
    public record Opened(Qwen35Model model, GgufMetadata ggufMetadata) {}

    public static Qwen35Model load(Path path, int threads) {
        return open(path, threads).model();
    }

    public static Opened open(Path path, int threads) {
        VectorSupport.require();
        if (Files.isDirectory(path)) {
            return new Opened(HuggingFaceLoader.load(path, threads), null);
        }
        if (!Files.exists(path)) {
            throw new EdgeLmException(path + ": no such file or folder");
        }
        if (GgufFile.isGgufName(path)) {
            GgufFile file = GgufFile.open(path, ModelMemory.preferredMode());
            return new Opened(GgufLoader.load(file, threads), file.metadata());
        }
        throw new EdgeLmException(path + ": not a model (expected a Hugging Face checkpoint folder or a .gguf file)");
    }
}
