package dev.edgelm.convert;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.convert.MmprojTensors.Entry;
import dev.edgelm.convert.RowStreamWriter.RowSource;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.image.ImageSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Converts the vision tower of a Hugging Face Qwen3.5 checkpoint ({@code model.visual.*}) into a vision
 * projector (mmproj) GGUF as llama.cpp's converter writes it (see {@link MmprojTensors} for names and
 * types, {@link MmprojWriter} for the metadata), with the processor's mean and std from
 * {@code preprocessor_config.json}. Values are copied unchanged (widened from the checkpoint's dtype, then
 * encoded in the file's types).
 */
public final class MmprojConverter {
    private MmprojConverter() {}

    /** The projector file written beside {@code modelOutput}: {@code mmproj-<model file name>}. */
    public static Path besideModel(Path modelOutput) {
        String file = modelOutput.getFileName().toString();
        String stem = file.toLowerCase(java.util.Locale.ROOT).endsWith(".gguf") ? file.substring(0, file.length() - 5) : file;
        return modelOutput.resolveSibling("mmproj-" + stem + ".gguf");
    }

    /** The tower's shape when the checkpoint folder's config.json has a {@code vision_config}, else null. */
    public static VisionTowerShape shapeOf(Path folder) {
        Path configPath = folder.resolve("config.json");
        JsonNode config = HfTokenizerFiles.readJson(configPath);
        return VisionTowerShape.fromConfig(config, configPath.toString());
    }

    /**
     * Writes the projector of the checkpoint in {@code folder} to {@code output}: encoder matrices in
     * {@code type}, the merger in Q8_0 under a quantised {@code recipe}. {@code progress} may be null.
     */
    public static MmprojWriter.Result convert(Path folder, Path output, MmprojType type, QuantRecipe recipe,
                                              Consumer<String> warn, RowStreamWriter.Progress progress) {
        VisionTowerShape shape = shapeOf(folder);
        if (shape == null) {
            throw new EdgeLmException(folder + ": config.json has no vision_config; the checkpoint has no vision tower");
        }
        if (shape.deepstackLayers().length > 0) {
            throw new EdgeLmException(folder + ": vision_config.deepstack_visual_indexes is not empty; DeepStack towers "
                    + "(Qwen3-VL) are not supported, only Qwen3.5's");
        }
        if (shape.temporalPatchSize() != 2) {
            throw new EdgeLmException(folder + ": vision_config.temporal_patch_size " + shape.temporalPatchSize()
                    + "; the mmproj layout holds exactly two patch-kernel frames");
        }
        ImageSettings processor = processorSettings(folder, warn);
        try (SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(folder)) {
            Map<String, TensorView> tensors = checkpoint.tensors();
            List<MmprojWriter.Planned> plan = new ArrayList<>();
            for (Entry e : MmprojTensors.of(shape)) {
                plan.add(new MmprojWriter.Planned(e, MmprojTensors.typeOf(e, type, recipe, warn), source(e, shape, tensors, folder)));
            }
            long expected = tensors.keySet().stream().filter(n -> n.startsWith(MmprojTensors.HF_PREFIX)).count();
            long used = plan.stream().map(p -> p.entry().hfName()).distinct().count();
            if (expected != used) {
                warn.accept(folder + ": " + (expected - used) + " model.visual.* tensors are not part of the Qwen3.5 projector layout and are left out");
            }
            Map<String, GgufValue> meta = new LinkedHashMap<>();
            MmprojWriter.putMetadata(meta, shape, type, folder.toAbsolutePath().normalize().getFileName().toString(),
                    processor.imageMean(), processor.imageStd());
            return MmprojWriter.write(output, meta, plan, progress);
        }
    }

    private static ImageSettings processorSettings(Path folder, Consumer<String> warn) {
        Path pre = folder.resolve("preprocessor_config.json");
        if (Files.isRegularFile(pre)) {
            return ImageSettings.fromPreprocessorConfig(pre);
        }
        warn.accept(folder + " has no preprocessor_config.json: writing Qwen3.5's image mean and std (0.5)");
        return ImageSettings.QWEN35;
    }

    private static RowSource source(Entry e, VisionTowerShape s, Map<String, TensorView> tensors, Path folder) {
        return switch (e.role()) {
            case VECTOR -> {
                float[] v = tensor(tensors, e.hfName(), folder, e.rowLength()).toFloatArray();
                yield (r, dst) -> System.arraycopy(v, 0, dst, 0, v.length);
            }
            case MATRIX, MERGER, POSITION -> {
                WeightMatrix m = tensor(tensors, e.hfName(), folder, e.rows(), e.rowLength()).asMatrix();
                yield (r, dst) -> m.decodeRow(r, dst, 0);
            }
            case PATCH -> {
                // checkpoint [hidden, channels, frames, p, p]; row o of frame t = W[o, :, t, :, :]
                int p2 = s.patchSize() * s.patchSize();
                int frames = s.temporalPatchSize();
                WeightMatrix m = tensor(tensors, e.hfName(), folder, s.hidden(), s.inChannels(), frames,
                        s.patchSize(), s.patchSize()).asMatrix();
                float[] full = new float[s.patchValues()];
                int frame = e.frame();
                yield (r, dst) -> {
                    m.decodeRow(r, full, 0);
                    for (int c = 0; c < s.inChannels(); c++) {
                        System.arraycopy(full, (c * frames + frame) * p2, dst, c * p2, p2);
                    }
                };
            }
        };
    }

    private static TensorView tensor(Map<String, TensorView> tensors, String name, Path folder, long... shape) {
        TensorView t = tensors.get(name);
        if (t == null) {
            throw new EdgeLmException(folder + ": the vision tower needs tensor " + name + " " + Arrays.toString(shape) + ", which is missing");
        }
        if (!Arrays.equals(t.shape(), shape)) {
            throw new EdgeLmException(t.source() + ": tensor " + name + " has shape " + t.shapeString() + ", expected " + Arrays.toString(shape));
        }
        return t;
    }
}
