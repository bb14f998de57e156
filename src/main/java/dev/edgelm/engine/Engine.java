package dev.edgelm.engine;

import dev.edgelm.hub.ModelResolver;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.model.Qwen35Model;
import java.nio.file.Path;

/**
 * A loaded model shared by any number of {@link Session}s. Forward passes of different sessions take
 * turns (one at a time: they share the kernel thread pool), so sessions may live on different threads.
 */
public final class Engine implements AutoCloseable {
    private final Qwen35Model model;
    private final Path modelPath;
    private final EngineOptions options;
    private final GenerationConfig generationConfig;
    private final double loadSeconds;

    private Engine(Qwen35Model model, Path modelPath, EngineOptions options, GenerationConfig generationConfig, double loadSeconds) {
        this.model = model;
        this.modelPath = modelPath;
        this.options = options;
        this.generationConfig = generationConfig;
        this.loadSeconds = loadSeconds;
    }

    /**
     * Opens what a user names, as every {@code edgelm} command does ({@link ModelResolver}): a {@code .gguf} file,
     * a checkpoint folder, or a Hugging Face Hub id ({@code owner/name[@revision]}), downloaded into the cache and
     * converted once to the int8 GGUF file that {@code edgelm run} loads for the same name.
     */
    public static Engine open(String model, EngineOptions options) {
        return open(model, options, ModelResolver.Options.defaults());
    }

    /** As {@link #open(String, EngineOptions)}, resolving the name with {@code resolve} (offline, quantisation, ...). */
    public static Engine open(String model, EngineOptions options, ModelResolver.Options resolve) {
        return load(ModelResolver.resolve(model, resolve).path(), options);
    }

    /** Loads a local model. */
    public static Engine load(Path path, EngineOptions options) {
        long start = System.nanoTime();
        ModelLoader.Opened opened = ModelLoader.open(path, options.threads());
        double seconds = (System.nanoTime() - start) / 1e9;
        Qwen35Model model = opened.model();
        GenerationConfig gen;
        try {
            gen = opened.ggufMetadata() != null ? GenerationConfig.fromGguf(opened.ggufMetadata()) : GenerationConfig.read(path);
        } catch (RuntimeException e) {
            model.close();
            throw e;
        }
        return new Engine(model, path, options, gen, seconds);
    }

    public Session newSession() {
        return new Session(this, model.newState(options.maxNumTokens()));
    }

    /**
     * Generation options as the model recommends them ({@code generation_config.json}), ready to adjust.
     * Without a generation config: greedy, stopping at {@code eos_token_id} of {@code config.json}.
     */
    public GenerationOptions.Builder defaultGenerationOptions() {
        GenerationOptions.Builder b = GenerationOptions.builder().apply(generationConfig);
        if (generationConfig.eosTokenIds().length == 0 && model.config().eosTokenId() >= 0) {
            b.addStopTokenIds(model.config().eosTokenId());
        }
        return b;
    }

    public Qwen35Config config() {
        return model.config();
    }

    public Path modelPath() {
        return modelPath;
    }

    public EngineOptions options() {
        return options;
    }

    public GenerationConfig generationConfig() {
        return generationConfig;
    }

    /** Seconds {@link ModelLoader} took (the Hub download, if any, not included). */
    public double loadSeconds() {
        return loadSeconds;
    }

    ChunkPlan prefillPlan() {
        return ChunkPlan.maxChunk(options.prefillChunk());
    }

    Qwen35Model model() {
        return model;
    }

    @Override
    public void close() {
        model.close();
    }
}
