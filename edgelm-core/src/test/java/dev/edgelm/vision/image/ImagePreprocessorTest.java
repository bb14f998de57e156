package dev.edgelm.vision.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.edgelm.format.npy.Npy;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The whole preprocessing against the PyTorch reference's {@code pixel_values} of tiny-vl (fixtures/qwen35/README.md). */
class ImagePreprocessorTest {
    static final Path GOLDEN = Path.of("src/test/resources/fixtures/qwen35/tiny-vl/golden");

    @Test
    void pixelValuesOfTheGoldenImageExactly() {
        RgbImage img = ImageLoader.read(GOLDEN.resolve("image.png"));
        assertEquals(512, img.width());
        assertEquals(128, img.height());
        PixelPatches p = new ImagePreprocessor(ImageSettings.QWEN35).process(img);
        Npy.Array expected = Npy.read(GOLDEN.resolve("pixel_values.npy"));
        Npy.Array grid = Npy.read(GOLDEN.resolve("image_grid_thw.npy"));
        assertArrayEquals(new long[] {1, 3}, grid.shape());
        assertArrayEquals(new int[] {(int) grid.longs()[0], (int) grid.longs()[1], (int) grid.longs()[2]},
                new int[] {p.gridT(), p.gridH(), p.gridW()});
        assertArrayEquals(new long[] {256, 1536}, expected.shape());
        assertEquals(256, p.patchCount());
        assertEquals(1536, p.patchDim());
        assertEquals(64, p.mergedTokenCount());
        float[] got = p.values();
        float[] want = expected.floats();
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            if (Float.floatToRawIntBits(want[i]) != Float.floatToRawIntBits(got[i])) {
                throw new AssertionError("pixel_values[" + i / 1536 + ", " + i % 1536 + "]: " + got[i] + ", expected " + want[i]);
            }
        }
    }

    @Test
    void resizedImageGivesThePillowBytesNormalised() {
        // tall-up: 61 x 97 upscaled to 224 x 352; each value must be the Pillow-resized byte, normalised, at its patch place
        Path dir = Path.of("src/test/resources/fixtures/images/resize");
        RgbImage pillow = ImageLoader.read(dir.resolve("tall-up-resized.png"));
        PixelPatches p = new ImagePreprocessor(ImageSettings.QWEN35).process(ImageLoader.read(dir.resolve("tall-up.png")));
        assertEquals(22, p.gridH());
        assertEquals(14, p.gridW());
        assertEquals(77, p.mergedTokenCount());
        float[] v = p.values();
        for (int row = 0; row < p.patchCount(); row++) {
            int block = row / 4;
            int py0 = (block / 7 * 2 + row % 4 / 2) * 16;
            int px0 = (block % 7 * 2 + row % 2) * 16;
            for (int c = 0; c < 3; c++) {
                for (int t = 0; t < 2; t++) {
                    for (int y = 0; y < 16; y++) {
                        for (int x = 0; x < 16; x++) {
                            float want = ((float) (pillow.at(px0 + x, py0 + y, c) * (1.0 / 255)) - 0.5f) / 0.5f;
                            assertEquals(want, v[row * 1536 + ((c * 2 + t) * 16 + y) * 16 + x], 0, "row " + row);
                        }
                    }
                }
            }
        }
    }

    @Test
    void rowsFollowMergeBlocksAndColumnsChannelTimeYX() {
        // 64 x 32 image (grid 2 x 4): pixel value encodes its position, so each element says where it came from
        int w = 64;
        int h = 32;
        byte[] rgb = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                rgb[(y * w + x) * 3] = (byte) x;
                rgb[(y * w + x) * 3 + 1] = (byte) y;
                rgb[(y * w + x) * 3 + 2] = (byte) 200;
            }
        }
        ImageSettings s = new ImageSettings(16, 2, 2, new float[] {0, 0, 0}, new float[] {1, 1, 1}, 1.0, 1, 1 << 20);
        PixelPatches p = new ImagePreprocessor(s).process(new RgbImage(w, h, rgb));
        assertEquals(2, p.gridH());
        assertEquals(4, p.gridW());
        assertEquals(2, p.mergedTokenCount());
        // row 5 = block (0, 1), in-block (0, 1): patch row 0, patch column 3 -> x0 = 48, y0 = 0
        int base = 5 * 1536;
        float[] v = p.values();
        assertEquals(48 + 7, v[base + 3 * 16 + 7], 0);          // red, t0, y3, x7
        assertEquals(48 + 7, v[base + 256 + 3 * 16 + 7], 0);    // red, t1 (repeated frame)
        assertEquals(3, v[base + 512 + 3 * 16 + 7], 0);         // green, t0, y3 -> y
        assertEquals(200, v[base + 1024 + 256 + 15], 0);        // blue, t1
        // row 2 = block (0, 0), in-block (1, 0): patch row 1, column 0 -> y0 = 16
        assertEquals(16 + 2, v[2 * 1536 + 512 + 2 * 16 + 1], 0);
        assertEquals(1, v[2 * 1536 + 2 * 16 + 1], 0);
    }

    @Test
    void normalisationIsFloat32OfTheDoubleRescale() {
        // the reference: float32(u8 * (1 / 255) in float64), then (x - 0.5) / 0.5 in float32
        byte[] rgb = new byte[32 * 32 * 3];
        rgb[0] = (byte) 1;
        rgb[1] = (byte) 128;
        rgb[2] = (byte) 255;
        ImageSettings s = ImageSettings.QWEN35.withPixelBounds(1024, 1024);
        PixelPatches p = new ImagePreprocessor(s).process(new RgbImage(32, 32, rgb));
        assertEquals(((float) (1 * (1.0 / 255)) - 0.5f) / 0.5f, p.values()[0], 0);
        assertEquals(((float) (128 * (1.0 / 255)) - 0.5f) / 0.5f, p.values()[512], 0);
        assertEquals(1.0f, p.values()[1024], 0);
        assertEquals(-1.0f, p.values()[1], 0);
    }
}
