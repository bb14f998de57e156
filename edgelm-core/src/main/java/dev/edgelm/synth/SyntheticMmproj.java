package dev.edgelm.synth;

import dev.edgelm.convert.MmprojTensors;
import dev.edgelm.convert.MmprojType;
import dev.edgelm.convert.MmprojWriter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.RowStreamWriter;
import dev.edgelm.convert.RowStreamWriter.RowSource;
import dev.edgelm.convert.VisionTowerShape;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.image.ImageSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes a vision projector (mmproj) GGUF with random weights at the exact shapes of a released Qwen3.5
 * vision tower, in the layout and types of {@code convert}: an encoder to benchmark without a download.
 * Weights and biases have standard deviation 0.02, LayerNorm scales about 1; each row comes from its own
 * generator seeded from (seed, tensor name, row), so the file depends only on the size, types and seed.
 */
public final class SyntheticMmproj {
    static final double STD = 0.02;

    private SyntheticMmproj() {}

    /** The released vision tower beside a text size (Qwen3.5 family table). */
    public static VisionTowerShape visionShape(SynthShape text) {
        return switch (text.size()) {
            case "0.8b" -> VisionTowerShape.released(12, 768, 12, 3072, text.hiddenSize());
            case "2b", "4b" -> VisionTowerShape.released(24, 1024, 16, 4096, text.hiddenSize());
            default -> throw new EdgeLmException("--mmproj: no released vision tower is known for size " + text.size());
        };
    }

    /** Writes the projector; {@code progress} may be null. Nothing is left at {@code output} on failure. */
    public static MmprojWriter.Result write(SynthShape text, MmprojType type, QuantRecipe recipe, long seed, Path output,
                                            Consumer<String> warn, RowStreamWriter.Progress progress) {
        VisionTowerShape s = visionShape(text);
        Map<String, GgufValue> meta = new LinkedHashMap<>();
        ImageSettings p = ImageSettings.QWEN35;
        MmprojWriter.putMetadata(meta, s, type, text.modelName() + " vision synthetic (random weights, seed " + seed + ")",
                p.imageMean(), p.imageStd());
        List<MmprojWriter.Planned> plan = new ArrayList<>();
        for (MmprojTensors.Entry e : MmprojTensors.of(s)) {
            long tensorSeed = SeededRows.tensorSeed(seed, e.name());
            boolean scale = e.name().endsWith(".weight") && (e.name().contains(".ln") || e.name().startsWith("v.post_ln"));
            int n = e.rowLength();
            double mean = scale ? 1 : 0;
            RowSource rows = (r, dst) -> SeededRows.fill(SeededRows.row(tensorSeed, r), dst, n, mean, STD);
            plan.add(new MmprojWriter.Planned(e, MmprojTensors.typeOf(e, type, recipe, warn), rows));
        }
        return MmprojWriter.write(output, meta, plan, progress);
    }
}
