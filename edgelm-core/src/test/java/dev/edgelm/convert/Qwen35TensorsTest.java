package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.model.GgufLoader;
import dev.edgelm.model.Qwen35Config;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The layout every writer walks, against files llama.cpp wrote. */
class Qwen35TensorsTest {
    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");

    @Test
    void namesDimsAndTypesAreThoseOfALlamaCppFile() {
        for (String format : new String[] {"BF16", "Q8_0"}) {
            try (GgufFile g = GgufFile.open(MINI.resolve("qwen35-mini-" + format + ".gguf"))) {
                Qwen35Config c = GgufLoader.config(g);
                QuantRecipe recipe = format.equals("BF16") ? QuantRecipe.BF16 : QuantRecipe.INT8;
                Map<String, String> expected = new TreeMap<>();
                for (GgufTensorInfo t : g.tensorInfos().values()) {
                    if (!t.name().contains(".nextn.") && !t.name().startsWith("blk." + c.numLayers() + ".")) {
                        expected.put(t.name(), java.util.Arrays.toString(t.dims()) + " " + t.type());
                    }
                }
                Map<String, String> ours = new TreeMap<>();
                List<String> warnings = new ArrayList<>();
                for (Qwen35Tensors.Entry e : Qwen35Tensors.of(c)) {
                    ours.put(e.name(), java.util.Arrays.toString(e.dims()) + " " + e.type(recipe, warnings::add));
                }
                assertEquals(expected, ours, format);
                assertEquals(List.of(), warnings);
            }
        }
    }

    @Test
    void aRowThatIsNotWholeBlocksFallsBackWithAWarning() {
        Qwen35Tensors.Entry e = new Qwen35Tensors.Entry(Qwen35Tensors.Kind.FFN_DOWN, 0, "blk.0.ffn_down.weight", new long[] {80, 64});
        List<String> warnings = new ArrayList<>();
        assertEquals(dev.edgelm.tensor.GgmlType.BF16, e.type(QuantRecipe.INT4, warnings::add));
        assertEquals(List.of("blk.0.ffn_down.weight: row length 80 is not a multiple of the Q4_0 block size 32; stored as BF16"), warnings);
        assertArrayEquals(new long[] {80, 64}, e.dims());
        assertEquals(64, e.rows());
    }
}
