package dev.edgelm.engine;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.PatchGrid;
import dev.edgelm.vision.VisionModel;
import dev.edgelm.vision.VisionTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

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
    /** The GGUF header (null for a checkpoint folder): where a GGUF model's vision token ids are found. */
    private final GgufMetadata ggufMetadata;
    /** The vision tower, opened on first use; {@link #setProjector} names its file, else it is found beside the model. */
    private Path projector;
    private VisionModel vision;
    private double visionLoadSeconds;
    private Long minPixels;
    private Long maxPixels;

    private Engine(Qwen35Model model, Path modelPath, EngineOptions options, GenerationConfig generationConfig,
                   double loadSeconds, GgufMetadata ggufMetadata) {
        this.ggufMetadata = ggufMetadata;
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
        return new Engine(model, path, options, gen, seconds, opened.ggufMetadata());
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

    /** The model, for engines built on this one (batched generation). */
    public Qwen35Model model() {
        return model;
    }

    /**
     * Names the vision projector (an mmproj GGUF, or a checkpoint folder with {@code model.visual.*}) to use instead
     * of the one beside the model. Takes effect if the vision tower has not been opened yet.
     */
    public synchronized void setProjector(Path file) {
        if (vision != null) {
            throw new IllegalStateException("the vision tower is already open (" + vision.source() + ")");
        }
        if (!Files.exists(file)) {
            throw new EdgeLmException(file + ": no such vision projector file");
        }
        this.projector = file;
    }

    /**
     * Overrides the resize bounds of the image preprocessing (the processor's {@code min_pixels} / {@code max_pixels};
     * null keeps the model's): fewer pixels give fewer image tokens.
     */
    public synchronized void setImagePixelBounds(Long minPixels, Long maxPixels) {
        this.minPixels = minPixels;
        this.maxPixels = maxPixels;
    }

    /** Whether a vision tower is available: named with {@link #setProjector} or found beside the model. */
    public synchronized boolean hasVision() {
        return vision != null || projector != null || VisionModel.locate(modelPath).isPresent();
    }

    /** The vision tower, opened on the first call; a model without one is an {@link EdgeLmException}. */
    public synchronized VisionModel vision() {
        if (vision == null) {
            Path source = projector != null ? projector : VisionModel.locate(modelPath).orElseThrow(() ->
                    new EdgeLmException(modelPath + ": this model has no vision tower, so it cannot take images"
                            + (GgufFile.isGgufName(modelPath) ? " (no mmproj-*.gguf beside it; name one with --mmproj)" : "")));
            long start = System.nanoTime();
            vision = VisionModel.open(source, options.threads());
            visionLoadSeconds = (System.nanoTime() - start) / 1e9;
        }
        return vision;
    }

    /** Seconds the vision tower took to open (0 until it is). */
    public synchronized double visionLoadSeconds() {
        return visionLoadSeconds;
    }

    /** The ids that frame an image in the prompt, from config.json or the GGUF vocabulary. */
    public VisionTokens visionTokens() {
        Optional<VisionTokens> t = ggufMetadata != null
                ? ggufMetadata.optStringArray(GgufTokenizerData.TOKENS).flatMap(VisionTokens::fromVocabulary)
                : VisionTokens.fromConfig(modelPath.resolve("config.json"));
        return t.orElseThrow(() -> new EdgeLmException(modelPath + ": the model declares no image token ("
                + VisionTokens.IMAGE_PAD + "), so it cannot take images"));
    }

    /**
     * Encodes an image as a message's image part holds it: a file path (a {@code Path} or a path string), the file's
     * bytes, a {@code BufferedImage}, or preprocessed {@link PatchGrid.Pixels}.
     */
    public ImageEmbedding encodeImage(Object image) {
        return embedding(vision(), model.config().hiddenSize(), preprocessImage(image));
    }

    /** An image decoded and preprocessed for the vision tower (see {@link #encodeImage}), within the pixel bounds. */
    public PatchGrid.Pixels preprocessImage(Object image) {
        VisionModel v = vision();
        Long min;
        Long max;
        synchronized (this) {
            min = minPixels;
            max = maxPixels;
        }
        return v.preprocess(image instanceof String path ? Path.of(path) : image, min, max);
    }

    /** Runs {@code vision} on one preprocessed image; its token embeddings as the decoder takes them. */
    public static ImageEmbedding embedding(VisionModel vision, int hidden, PatchGrid.Pixels pixels) {
        if (vision.config().outHidden() != hidden) {
            throw new EdgeLmException(vision.source() + ": the vision tower's output width " + vision.config().outHidden()
                    + " does not match the model's hidden size " + hidden);
        }
        PatchGrid grid = pixels.grid();
        int merge = vision.config().merge();
        return new ImageEmbedding(vision.encode(pixels), grid.t() * grid.h() / merge, grid.w() / merge);
    }

    @Override
    public void close() {
        model.close();
        synchronized (this) {
            if (vision != null) {
                vision.close();
            }
        }
    }
}
