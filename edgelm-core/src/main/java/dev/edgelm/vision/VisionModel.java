package dev.edgelm.vision;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.ModelMemory;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.image.ImageLoader;
import dev.edgelm.vision.image.ImagePreprocessor;
import dev.edgelm.vision.image.ImageSettings;
import dev.edgelm.vision.image.PixelPatches;
import dev.edgelm.vision.image.RgbImage;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A loaded vision tower: its config, weights, encoder and thread pool, and the file it came from. Opened from a
 * Hugging Face checkpoint folder ({@code model.visual.*}) or a vision projector GGUF ({@code mmproj-*.gguf}).
 */
public final class VisionModel implements AutoCloseable {
    private final VisionConfig config;
    private final VisionWeights weights;
    private final VisionEncoder encoder;
    private final Parallel pool;
    private final AutoCloseable storage;
    private final Path source;
    private final ImageSettings imageSettings;

    private VisionModel(VisionConfig config, VisionWeights weights, int threads, AutoCloseable storage, Path source,
                        ImageSettings imageSettings) {
        this.imageSettings = imageSettings;
        this.config = config;
        this.weights = weights;
        this.pool = new Parallel(threads);
        this.encoder = new VisionEncoder(config, weights, pool);
        this.storage = storage;
        this.source = source;
    }

    public VisionConfig config() {
        return config;
    }

    /** How images are resized and normalised for this tower (preprocessor_config.json, or the mmproj metadata). */
    public ImageSettings imageSettings() {
        return imageSettings;
    }

    public VisionWeights weights() {
        return weights;
    }

    public VisionEncoder encoder() {
        return encoder;
    }

    /** The checkpoint folder or projector file the weights came from. */
    public Path source() {
        return source;
    }

    /**
     * An image as the encoder takes it: pixel patches as given, or (files, bytes, {@code BufferedImage}) decoded and
     * preprocessed as the reference processor does, within the pixel bounds (null: the model's).
     */
    public PatchGrid.Pixels preprocess(Object image, Long minPixels, Long maxPixels) {
        RgbImage rgb = switch (image) {
            case PatchGrid.Pixels p -> null;
            case Path path -> ImageLoader.read(path);
            case byte[] bytes -> ImageLoader.read(bytes, "image (" + bytes.length + " bytes)");
            case BufferedImage buffered -> ImageLoader.of(buffered);
            case null -> throw new EdgeLmException("an image part holds no image");
            default -> throw new EdgeLmException("cannot read an image from a " + image.getClass().getSimpleName()
                    + " (give a file path, the file's bytes or a BufferedImage)");
        };
        if (rgb == null) {
            return (PatchGrid.Pixels) image;
        }
        ImageSettings s = imageSettings;
        if (minPixels != null || maxPixels != null) {
            s = s.withPixelBounds(minPixels != null ? minPixels : Math.min(s.minPixels(), maxPixels),
                    maxPixels != null ? maxPixels : Math.max(s.maxPixels(), minPixels));
        }
        if (s.patchSize() != config.patch() || s.mergeSize() != config.merge() || s.temporalPatchSize() != config.temporalPatch()) {
            throw new EdgeLmException(source + ": the image settings (patch " + s.patchSize() + ", merge " + s.mergeSize()
                    + ") do not fit the vision tower (patch " + config.patch() + ", merge " + config.merge() + ")");
        }
        PixelPatches p = new ImagePreprocessor(s).process(rgb);
        return new PatchGrid.Pixels(p.values(), new PatchGrid(p.gridT(), p.gridH(), p.gridW()));
    }

    /** Encodes one image; returns its token embeddings [tokens, outHidden], row-major over the merged grid. */
    public float[] encode(PatchGrid.Pixels pixels) {
        return encoder.encode(pixels.values(), List.of(pixels.grid()));
    }

    /** Opens a projector file (GGUF) or a checkpoint folder's vision tower. */
    public static VisionModel open(Path path, int threads) {
        if (Files.isDirectory(path)) {
            return openCheckpoint(path, threads);
        }
        if (!Files.isRegularFile(path)) {
            throw new EdgeLmException(path + ": no such vision projector file");
        }
        if (!GgufFile.isGgufName(path)) {
            throw new EdgeLmException(path + ": not a vision projector (expected an mmproj .gguf file or a checkpoint folder)");
        }
        GgufFile file = GgufFile.open(path, ModelMemory.Mode.MAPPED);
        try {
            VisionConfig config = VisionLoader.configOf(file);
            return new VisionModel(config, VisionLoader.fromGguf(file, config), threads, file, path,
                    ImageSettings.fromMmproj(file.metadata()));
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    private static VisionModel openCheckpoint(Path folder, int threads) {
        VisionConfig config = checkpointConfig(folder).orElseThrow(() ->
                new EdgeLmException(folder + ": config.json has no vision_config: this model has no vision tower"));
        SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(folder);
        try {
            if (!VisionLoader.hasVisionTower(checkpoint.tensors())) {
                throw new EdgeLmException(folder + ": config.json has a vision_config but the weights hold no "
                        + VisionLoader.CHECKPOINT_PREFIX + "* tensors (a text-only export)");
            }
            Path processor = folder.resolve("preprocessor_config.json");
            ImageSettings settings = Files.isRegularFile(processor) ? ImageSettings.fromPreprocessorConfig(processor)
                    : ImageSettings.QWEN35;
            return new VisionModel(config, VisionLoader.fromCheckpoint(checkpoint.tensors(), config, folder.toString()),
                    threads, checkpoint, folder, settings);
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
    }

    /** The {@code vision_config} of a checkpoint folder's config.json, if it has one. */
    public static Optional<VisionConfig> checkpointConfig(Path folder) {
        Path json = folder.resolve("config.json");
        if (!Files.isRegularFile(json)) {
            return Optional.empty();
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(json));
        } catch (IOException e) {
            throw new EdgeLmException(json + ": cannot read or parse: " + e.getMessage());
        }
        JsonNode v = root == null ? null : root.get("vision_config");
        if (v == null || !v.isObject()) {
            return Optional.empty();
        }
        return Optional.of(VisionConfig.fromJson(v, json.toString()));
    }

    /**
     * Where a model's vision tower is, when the user named none: the checkpoint folder itself when its config has
     * a {@code vision_config}; for a {@code .gguf} model, the {@code mmproj-*.gguf} beside it (with several,
     * {@code mmproj-<model name>.gguf}, else an error listing them).
     */
    public static Optional<Path> locate(Path model) {
        if (Files.isDirectory(model)) {
            return checkpointConfig(model).isPresent() ? Optional.of(model) : Optional.empty();
        }
        Path dir = model.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            return Optional.empty();
        }
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "mmproj*")) {
            for (Path p : s) {
                if (GgufFile.isGgufName(p) && Files.isRegularFile(p)) {
                    found.add(p);
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        if (found.size() <= 1) {
            return found.stream().findFirst();
        }
        String name = model.getFileName().toString();
        Path exact = dir.resolve("mmproj-" + name);
        if (found.contains(exact)) {
            return Optional.of(exact);
        }
        found.sort(null);
        throw new EdgeLmException(model + ": several vision projector files beside the model (" + found.stream()
                .map(p -> p.getFileName().toString()).toList() + "); choose one with --mmproj");
    }

    @Override
    public void close() {
        pool.close();
        try {
            storage.close();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
