package dev.edgelm.synth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.convert.MmprojTensors;
import dev.edgelm.convert.MmprojType;
import dev.edgelm.convert.MmprojWriter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.VisionTowerShape;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.tensor.GgmlType;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The random projector at the released vision sizes (Qwen3.5 family table). */
class SyntheticMmprojTest {

    @Test
    void releasedVisionSizes() {
        VisionTowerShape small = SyntheticMmproj.visionShape(SynthShape.released("0.8b"));
        assertEquals(12, small.depth());
        assertEquals(768, small.hidden());
        assertEquals(12, small.heads());
        assertEquals(3072, small.intermediate());
        assertEquals(1024, small.outHidden());
        // the family table: vision 0.10 B parameters for the 0.8B
        long params = MmprojWriter.parameterCount(small);
        assertTrue(params > 0.095e9 && params < 0.105e9, "0.8B vision parameters " + params);
        VisionTowerShape mid = SyntheticMmproj.visionShape(SynthShape.released("2b"));
        assertEquals(24, mid.depth());
        assertEquals(1024, mid.hidden());
        assertEquals(16, mid.heads());
        assertEquals(4096, mid.intermediate());
        assertEquals(2048, mid.outHidden());
    }

    @Test
    void writesTheConvertLayoutAt08b(@TempDir Path dir) {
        SynthShape text = SynthShape.released("0.8b");
        Path out = dir.resolve("mmproj.gguf");
        MmprojWriter.Result r = SyntheticMmproj.write(text, MmprojType.F16, QuantRecipe.INT8, 7, out, w -> { }, null);
        List<MmprojTensors.Entry> layout = MmprojTensors.of(SyntheticMmproj.visionShape(text));
        assertEquals(layout.size(), r.tensors());
        try (GgufFile g = GgufFile.open(out)) {
            assertEquals(layout.stream().map(MmprojTensors.Entry::name).toList(), List.copyOf(g.tensorInfos().keySet()));
            assertEquals(12, g.metadata().requireLong("clip.vision.block_count"));
            assertEquals(1024, g.metadata().requireLong("clip.vision.projection_dim"));
            assertEquals(768, g.metadata().requireLong("clip.vision.image_size"));
            assertEquals(GgmlType.Q8_0, g.tensorInfos().get("mm.0.weight").type());
            float[] ln = g.tensor("v.blk.3.ln1.weight").toFloatArray();
            double mean = 0;
            for (float v : ln) {
                mean += v / ln.length;
            }
            assertEquals(1.0, mean, 0.01, "LayerNorm scales about 1");
            float[] qkvBias = g.tensor("v.blk.3.attn_qkv.bias").toFloatArray();
            assertEquals(3 * 768, qkvBias.length);
        }
    }
}
