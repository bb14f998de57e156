package dev.edgelm.vision.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The bicubic resize against Pillow 11.3.0's {@code Image.resize(BICUBIC)} outputs (fixtures/images): byte
 * for byte, down- and upscaling, both axes and one axis.
 */
class BicubicResizeTest {
    static final Path DIR = Path.of("src/test/resources/fixtures/images/resize");

    @Test
    void matchesPillowByteForByte() throws Exception {
        JsonNode cases = new ObjectMapper().readTree(DIR.resolve("manifest.json").toFile()).get("cases");
        for (JsonNode c : cases) {
            String name = c.get("name").asText();
            RgbImage src = ImageLoader.read(DIR.resolve(name + ".png"));
            RgbImage expected = ImageLoader.read(DIR.resolve(name + "-resized.png"));
            assertEquals(c.get("source_hw").get(0).asInt(), src.height(), name);
            assertEquals(c.get("source_hw").get(1).asInt(), src.width(), name);
            int[] target = SmartResize.targetSize(src.height(), src.width(), ImageSettings.QWEN35);
            assertEquals(expected.height(), target[0], name);
            assertEquals(expected.width(), target[1], name);
            RgbImage got = BicubicResize.resize(src, target[1], target[0]);
            int worst = 0;
            for (int i = 0; i < got.rgb().length; i++) {
                worst = Math.max(worst, Math.abs((got.rgb()[i] & 0xff) - (expected.rgb()[i] & 0xff)));
            }
            assertEquals(0, worst, name + ": largest pixel difference to Pillow");
            assertArrayEquals(expected.rgb(), got.rgb(), name);
        }
    }

    @Test
    void sameSizeIsTheIdentity() {
        RgbImage img = new RgbImage(2, 1, new byte[] {1, 2, 3, 4, 5, 6});
        assertSame(img, BicubicResize.resize(img, 2, 1));
    }

    @Test
    void constantImageStaysConstant() {
        // normalised weights sum to one: a flat image stays flat at every scale (values hand-checked: 77 in, 77 out)
        byte[] px = new byte[7 * 5 * 3];
        java.util.Arrays.fill(px, (byte) 77);
        RgbImage flat = new RgbImage(7, 5, px);
        for (int[] size : new int[][] {{3, 2}, {64, 40}, {7, 11}, {20, 5}}) {
            RgbImage r = BicubicResize.resize(flat, size[0], size[1]);
            for (byte b : r.rgb()) {
                assertEquals(77, b & 0xff);
            }
        }
    }

    @Test
    void bicubicKernelValues() {
        // a = -0.5: k(0) = 1, k(0.5) = 0.5625, k(1) = 0, k(1.5) = -0.0625, k(2) = 0
        assertEquals(1.0, BicubicResize.filter(0), 0);
        assertEquals(0.5625, BicubicResize.filter(0.5), 0);
        assertEquals(0.0, BicubicResize.filter(1), 0);
        assertEquals(-0.0625, BicubicResize.filter(-1.5), 0);
        assertEquals(0.0, BicubicResize.filter(2), 0);
    }
}
