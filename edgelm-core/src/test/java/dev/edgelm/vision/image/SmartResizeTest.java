package dev.edgelm.vision.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** smart_resize against every case of the Pillow / transformers resize manifest (fixtures/images/README.md). */
class SmartResizeTest {
    static final Path MANIFEST = Path.of("src/test/resources/fixtures/images/resize/manifest.json");

    @Test
    void arithmeticCasesOfTheManifest() throws Exception {
        JsonNode cases = new ObjectMapper().readTree(MANIFEST.toFile()).get("smart_resize_cases [h, w, resized_h, resized_w]");
        assertEquals(11, cases.size());
        int errors = 0;
        for (JsonNode c : cases) {
            int h = c.get(0).asInt();
            int w = c.get(1).asInt();
            if (c.get(2).isTextual()) {
                assertTrue(c.get(2).asText().contains("aspect ratio"), c.toString());
                EdgeLmException e = assertThrows(EdgeLmException.class, () -> SmartResize.targetSize(h, w, ImageSettings.QWEN35));
                assertTrue(e.getMessage().contains("aspect ratio"), e.getMessage());
                errors++;
            } else {
                assertArrayEquals(new int[] {c.get(2).asInt(), c.get(3).asInt()}, SmartResize.targetSize(h, w, ImageSettings.QWEN35),
                        c.toString());
            }
        }
        assertEquals(2, errors);
    }

    @Test
    void imageCasesOfTheManifest() throws Exception {
        JsonNode cases = new ObjectMapper().readTree(MANIFEST.toFile()).get("cases");
        assertEquals(4, cases.size());
        for (JsonNode c : cases) {
            int[] target = SmartResize.targetSize(c.get("source_hw").get(0).asInt(), c.get("source_hw").get(1).asInt(), ImageSettings.QWEN35);
            assertArrayEquals(new int[] {c.get("resized_hw").get(0).asInt(), c.get("resized_hw").get(1).asInt()}, target, c.toString());
        }
    }

    @Test
    void pythonRoundsHalfToEven() {
        // 208 / 32 = 6.5 -> 6 (not 7); 400 / 32 = 12.5 -> 12; 336 / 32 = 10.5 -> 10; 368 / 32 = 11.5 -> 12
        assertArrayEquals(new int[] {192, 384}, SmartResize.targetSize(208, 400, ImageSettings.QWEN35));
        assertArrayEquals(new int[] {320, 384}, SmartResize.targetSize(336, 368, ImageSettings.QWEN35));
    }

    @Test
    void overriddenBoundsClampTheArea() {
        // max 262144 = 512 x 512: 1080 x 1920 -> beta = sqrt(2073600 / 262144) = 2.8125; 384 x 672 (floor of 12.0, 21.33)
        ImageSettings s = ImageSettings.QWEN35.withPixelBounds(65536, 262144);
        assertArrayEquals(new int[] {384, 672}, SmartResize.targetSize(1080, 1920, s));
        // min 262144: 100 x 100 -> beta 5.12 -> ceil(512 / 32) -> 512 x 512
        ImageSettings up = ImageSettings.QWEN35.withPixelBounds(262144, 16777216);
        assertArrayEquals(new int[] {512, 512}, SmartResize.targetSize(100, 100, up));
        assertThrows(EdgeLmException.class, () -> ImageSettings.QWEN35.withPixelBounds(1000, 10));
        assertThrows(EdgeLmException.class, () -> ImageSettings.QWEN35.withPixelBounds(0, 10));
    }

    @Test
    void aspectRatioOfExactly200IsAllowed() {
        assertArrayEquals(new int[] {32, 6400}, SmartResize.targetSize(32, 6400, ImageSettings.QWEN35));
        assertThrows(EdgeLmException.class, () -> SmartResize.targetSize(32, 6401, ImageSettings.QWEN35));
        assertThrows(EdgeLmException.class, () -> SmartResize.targetSize(0, 10, ImageSettings.QWEN35));
    }
}
