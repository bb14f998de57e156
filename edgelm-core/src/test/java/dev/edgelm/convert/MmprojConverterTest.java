package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mmproj writer against the files llama.cpp's own converter wrote for tiny-vl (fixtures/gguf/vision):
 * same metadata keys, types and values, tensor names, order, dims and types, and tensor bytes.
 */
class MmprojConverterTest {
    static final Path TINY_VL = Path.of("src/test/resources/fixtures/qwen35/tiny-vl");
    static final Path VISION = Path.of("src/test/resources/fixtures/gguf/vision");

    @TempDir
    Path tmp;
    Path checkpoint;

    @BeforeEach
    void checkpointWithProcessorConfig() throws Exception {
        // as the llama.cpp files were made: the checkpoint folder plus the released preprocessor_config.json
        checkpoint = Files.createDirectory(tmp.resolve("tiny-vl"));
        Files.copy(TINY_VL.resolve("config.json"), checkpoint.resolve("config.json"));
        Files.copy(TINY_VL.resolve("model.safetensors"), checkpoint.resolve("model.safetensors"));
        Files.copy(VISION.resolve("preprocessor_config.json"), checkpoint.resolve("preprocessor_config.json"));
    }

    private Path convert(MmprojType type, QuantRecipe recipe, List<String> warnings) {
        Path out = tmp.resolve("mmproj-" + type.cliName() + "-" + recipe.cliName() + ".gguf");
        MmprojConverter.convert(checkpoint, out, type, recipe, warnings::add, null);
        return out;
    }

    @Test
    void f32AndF16AreLlamaCppsFilesTensorForTensor() {
        for (MmprojType type : new MmprojType[] {MmprojType.F32, MmprojType.F16}) {
            List<String> warnings = new ArrayList<>();
            Path ours = convert(type, QuantRecipe.BF16, warnings);
            assertEquals(List.of(), warnings);
            try (GgufFile mine = GgufFile.open(ours);
                 GgufFile ref = GgufFile.open(VISION.resolve("mmproj-tiny-vl-" + type.cliName() + ".gguf"))) {
                assertSameMetadata(ref, mine);
                assertEquals(34, ref.tensorInfos().size());
                assertEquals(List.copyOf(ref.tensorInfos().keySet()), List.copyOf(mine.tensorInfos().keySet()), "names in file order");
                for (GgufTensorInfo r : ref.tensorInfos().values()) {
                    GgufTensorInfo m = mine.tensorInfos().get(r.name());
                    assertArrayEquals(r.dims(), m.dims(), r.name());
                    assertEquals(r.type(), m.type(), r.name());
                    // bf16 checkpoint values are exact in f32 and in f16: the bytes must be the same
                    assertEquals(-1, mine.tensor(r.name()).data().mismatch(ref.tensor(r.name()).data()), r.name() + " bytes");
                }
            }
        }
    }

    @Test
    void bf16KeepsThePatchKernelAndTablesInF32AndValuesExact() {
        Path ours = convert(MmprojType.BF16, QuantRecipe.BF16, new ArrayList<>());
        try (GgufFile mine = GgufFile.open(ours); GgufFile ref = GgufFile.open(VISION.resolve("mmproj-tiny-vl-f32.gguf"))) {
            assertEquals(32, mine.metadata().requireLong("general.file_type"));
            assertEquals(GgmlType.BF16, mine.tensorInfos().get("v.blk.0.attn_qkv.weight").type());
            assertEquals(GgmlType.BF16, mine.tensorInfos().get("mm.0.weight").type());
            assertEquals(GgmlType.F32, mine.tensorInfos().get("v.patch_embd.weight.1").type());
            assertEquals(GgmlType.F32, mine.tensorInfos().get("v.position_embd.weight").type());
            assertEquals(GgmlType.F32, mine.tensorInfos().get("v.post_ln.weight").type());
            for (GgufTensorInfo r : ref.tensorInfos().values()) {
                assertArrayEquals(values(ref.tensor(r.name())), values(mine.tensor(r.name())), r.name());
            }
        }
    }

    @Test
    void quantisedTextRecipesPutTheMergerInQ8() {
        for (QuantRecipe recipe : new QuantRecipe[] {QuantRecipe.INT8, QuantRecipe.INT4}) {
            Path ours = convert(MmprojType.F16, recipe, new ArrayList<>());
            try (GgufFile mine = GgufFile.open(ours); GgufFile ref = GgufFile.open(VISION.resolve("mmproj-tiny-vl-f32.gguf"))) {
                for (GgufTensorInfo m : mine.tensorInfos().values()) {
                    GgmlType expected = m.name().startsWith("mm.") && m.name().endsWith(".weight") ? GgmlType.Q8_0
                            : ref.tensorInfos().get(m.name()).nDims() == 1 || m.name().equals("v.position_embd.weight") ? GgmlType.F32
                            : GgmlType.F16;
                    assertEquals(expected, m.type(), m.name());
                }
                // Q8_0: per block of 32, error at most half a step d = max|w| / 127, plus 127 times the f16 rounding of d (2^-11 d)
                for (String name : new String[] {"mm.0.weight", "mm.2.weight"}) {
                    float[] want = values(ref.tensor(name));
                    float[] got = values(mine.tensor(name));
                    for (int b = 0; b < want.length; b += 32) {
                        float amax = 0;
                        for (int i = b; i < b + 32; i++) {
                            amax = Math.max(amax, Math.abs(want[i]));
                        }
                        for (int i = b; i < b + 32; i++) {
                            assertTrue(Math.abs(got[i] - want[i]) <= amax / 127 * (0.5 + 127 * 0x1p-11) + 1e-7, name + "[" + i + "]: " + got[i] + " vs " + want[i] + ", amax " + amax);
                        }
                    }
                }
            }
        }
    }

    @Test
    void checkpointWithoutAVisionTowerIsAnError() {
        Path textOnly = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
        assertEquals(null, MmprojConverter.shapeOf(textOnly));
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> MmprojConverter.convert(textOnly, tmp.resolve("x.gguf"), MmprojType.F16, QuantRecipe.BF16, w -> {}, null));
        assertTrue(e.getMessage().contains("vision"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("x.gguf")));
    }

    @Test
    void missingProcessorConfigWarnsAndWritesQwenDefaults() throws Exception {
        Files.delete(checkpoint.resolve("preprocessor_config.json"));
        List<String> warnings = new ArrayList<>();
        Path ours = convert(MmprojType.F32, QuantRecipe.BF16, warnings);
        assertEquals(1, warnings.size());
        assertTrue(warnings.get(0).contains("preprocessor_config.json"));
        try (GgufFile mine = GgufFile.open(ours)) {
            assertArrayEquals(new float[] {0.5f, 0.5f, 0.5f}, mine.metadata().asMap().get("clip.vision.image_mean").floats());
        }
    }

    @Test
    void fileNameBesideTheModel() {
        assertEquals(Path.of("out/mmproj-tiny-int8.gguf"), MmprojConverter.besideModel(Path.of("out/tiny-int8.gguf")));
        assertEquals(Path.of("mmproj-model.bin.gguf"), MmprojConverter.besideModel(Path.of("model.bin")));
    }

    @Test
    void sizeLabelsAsGgufPy() {
        // gguf-py model_weight_count_rounded_notation, min_digits 2
        assertEquals("173K", MmprojWriter.sizeLabel(173_088));
        assertEquals("100M", MmprojWriter.sizeLabel(99_876_544));
        assertEquals("1.5B", MmprojWriter.sizeLabel(1_543_000_000L));
        assertEquals("9.0K", MmprojWriter.sizeLabel(9_000));
    }

    static void assertSameMetadata(GgufFile ref, GgufFile mine) {
        Map<String, GgufValue> r = ref.metadata().asMap();
        Map<String, GgufValue> m = mine.metadata().asMap();
        List<String> refKeys = new ArrayList<>(r.keySet());
        List<String> myKeys = new ArrayList<>(m.keySet());
        assertEquals(refKeys, myKeys, "keys in file order");
        for (String k : refKeys) {
            if (k.equals("general.name")) {
                // llama.cpp title-cases the folder name ("Tiny Vl"); EdgeLM writes the folder name as the text converter does
                assertEquals("tiny-vl", m.get(k).asString());
                continue;
            }
            assertEquals(r.get(k), m.get(k), k);
        }
    }

    static float[] values(GgufTensor t) {
        if (t.type() == GgmlType.Q8_0) {
            var mat = t.asMatrix();
            float[] out = new float[mat.rows() * mat.cols()];
            for (int i = 0; i < mat.rows(); i++) {
                mat.decodeRow(i, out, i * mat.cols());
            }
            return out;
        }
        return t.toFloatArray();
    }

}
