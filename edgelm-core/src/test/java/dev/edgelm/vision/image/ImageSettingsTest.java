package dev.edgelm.vision.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The settings from the released processor config and from llama.cpp-written mmproj files (fixtures/gguf/vision). */
class ImageSettingsTest {
    static final Path VISION = Path.of("src/test/resources/fixtures/gguf/vision");

    @Test
    void releasedPreprocessorConfig() {
        ImageSettings s = ImageSettings.fromPreprocessorConfig(VISION.resolve("preprocessor_config.json"));
        assertEquals(16, s.patchSize());
        assertEquals(2, s.temporalPatchSize());
        assertEquals(2, s.mergeSize());
        assertEquals(32, s.factor());
        assertArrayEquals(new float[] {0.5f, 0.5f, 0.5f}, s.imageMean());
        assertArrayEquals(new float[] {0.5f, 0.5f, 0.5f}, s.imageStd());
        assertEquals(65536, s.minPixels());
        assertEquals(16777216, s.maxPixels());
        assertEquals(ImageSettings.QWEN35, s);
    }

    @Test
    void llamaCppMmprojMetadata() {
        for (String f : new String[] {"mmproj-tiny-vl-f32.gguf", "mmproj-tiny-vl-f16.gguf"}) {
            try (GgufFile g = GgufFile.open(VISION.resolve(f))) {
                ImageSettings s = ImageSettings.fromMmproj(g.metadata());
                assertEquals(ImageSettings.QWEN35, s, f);
            }
        }
    }

    @Test
    void topLevelPixelBoundsOverrideSize(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("preprocessor_config.json");
        Files.writeString(json, """
                {"size": {"shortest_edge": 3136, "longest_edge": 12845056}, "max_pixels": 1003520,
                 "patch_size": 14, "merge_size": 2, "temporal_patch_size": 2,
                 "image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}""");
        ImageSettings s = ImageSettings.fromPreprocessorConfig(json);
        assertEquals(3136, s.minPixels());
        assertEquals(1003520, s.maxPixels());
        assertEquals(28, s.factor());
        assertEquals(0.48145466f, s.imageMean()[0]);
        ImageSettings w = s.withPixelBounds(100, 200);
        assertEquals(100, w.minPixels());
        assertEquals(200, w.maxPixels());
        assertEquals(14, w.patchSize());
    }

    @Test
    void badConfigsNameTheFileAndField(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("preprocessor_config.json");
        Files.writeString(json, "{\"image_mean\": [0.5, 0.5]}");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ImageSettings.fromPreprocessorConfig(json));
        assertTrue(e.getMessage().contains(json.toString()) && e.getMessage().contains("image_mean"), e.getMessage());
        Files.writeString(json, "{\"patch_size\": -3}");
        e = assertThrows(EdgeLmException.class, () -> ImageSettings.fromPreprocessorConfig(json));
        assertTrue(e.getMessage().contains("patch_size"), e.getMessage());
        Files.writeString(json, "{\"image_std\": [0.5, 0, 0.5]}");
        e = assertThrows(EdgeLmException.class, () -> ImageSettings.fromPreprocessorConfig(json));
        assertTrue(e.getMessage().contains("image_std"), e.getMessage());
        Files.writeString(json, "not json");
        assertThrows(EdgeLmException.class, () -> ImageSettings.fromPreprocessorConfig(json));
        assertThrows(EdgeLmException.class, () -> ImageSettings.fromPreprocessorConfig(tmp.resolve("missing.json")));
    }
}
