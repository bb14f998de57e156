package dev.edgelm.vision.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Decoding against what Pillow (open, {@code ImageOps.exif_transpose}, transformers' {@code convert_to_rgb})
 * makes of the same files: fixtures/images/decode, written by its {@code make.py} with Pillow.
 */
class ImageLoaderTest {
    static final Path DIR = Path.of("src/test/resources/fixtures/images/decode");

    /** Every format decodes exactly as Pillow 9.4 (libjpeg-turbo, libpng, libwebp) decodes it, except lossy WebP (below). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "rgb.png, 0", "rgba.png, 0", "gray.png, 0", "gray-alpha.png, 0", "palette-transparent.png, 0",
        "image.bmp, 0", "animated.gif, 0", "lossless.webp, 0", "alpha.webp, 0",
        "photo.jpg, 0", "cmyk.jpg, 0",
        "exif-2.jpg, 0", "exif-3.jpg, 0", "exif-4.jpg, 0", "exif-5.jpg, 0", "exif-6.jpg, 0", "exif-7.jpg, 0", "exif-8.jpg, 0",
    })
    void decodesAsPillowDoes(String file, int tolerance) {
        RgbImage got = ImageLoader.read(DIR.resolve(file));
        RgbImage want = ImageLoader.read(DIR.resolve(file.substring(0, file.lastIndexOf('.')) + ".expected.png"));
        assertEquals(want.width(), got.width(), file + " width");
        assertEquals(want.height(), got.height(), file + " height");
        int worst = 0;
        for (int i = 0; i < want.rgb().length; i++) {
            worst = Math.max(worst, Math.abs((got.rgb()[i] & 0xff) - (want.rgb()[i] & 0xff)));
        }
        assertTrue(worst <= tolerance, file + ": largest difference to Pillow " + worst + " > " + tolerance);
    }

    /**
     * Lossy WebP: the pure-Java VP8 decoder upsamples chroma to the nearest sample, libwebp ("fancy upsampling")
     * bilinearly, so the two differ next to a sharp colour edge (up to 59 here, in the two columns either side
     * of the edges at x = 8 and x = 16 of this image) and by at most 1 elsewhere.
     */
    @Test
    void lossyWebpDiffersFromLibwebpOnlyAtColourEdges() {
        RgbImage got = ImageLoader.read(DIR.resolve("lossy.webp"));
        RgbImage want = ImageLoader.read(DIR.resolve("lossy.expected.png"));
        int worstEdge = 0;
        int worstElsewhere = 0;
        for (int y = 0; y < want.height(); y++) {
            for (int x = 0; x < want.width(); x++) {
                for (int c = 0; c < 3; c++) {
                    int d = Math.abs(got.at(x, y, c) - want.at(x, y, c));
                    boolean edge = x == 7 || x == 8 || x == 15 || x == 16;
                    if (edge) {
                        worstEdge = Math.max(worstEdge, d);
                    } else {
                        worstElsewhere = Math.max(worstElsewhere, d);
                    }
                }
            }
        }
        assertTrue(worstElsewhere <= 1, "away from edges: " + worstElsewhere);
        assertTrue(worstEdge <= 64, "at edges: " + worstEdge);
    }

    @Test
    void exifOrientationSixIsAClockwiseQuarterTurn() {
        // the source is 24 x 16, red-ish left third; turned clockwise the red third is at the top of a 16 x 24 image
        RgbImage img = ImageLoader.read(DIR.resolve("exif-6.jpg"));
        assertEquals(16, img.width());
        assertEquals(24, img.height());
        assertTrue(img.at(8, 2, 0) > 180 && img.at(8, 2, 2) < 90, "top is red");
        assertTrue(img.at(8, 21, 2) > 180 && img.at(8, 21, 0) < 90, "bottom is blue");
    }

    @Test
    void alphaOverWhiteUsesPillowsIntegerBlend() {
        // hand-derived from AlphaComposite.c: coef1 = a << 7, coef2 = (255 - a) << 7, t = c coef1 + 255 coef2 + 2^14,
        // ((t >> 8) + t) >> 8 >> 7
        assertEquals(127, ImageLoader.overWhite(0, 128));
        assertEquals(241, ImageLoader.overWhite(200, 64));
        assertEquals(255, ImageLoader.overWhite(17, 0));
        assertEquals(17, ImageLoader.overWhite(17, 255));
        assertEquals(255, ImageLoader.overWhite(255, 1));
    }

    @Test
    void bufferedImagesOfTheUsualTypes() {
        BufferedImage bgr = new BufferedImage(2, 1, BufferedImage.TYPE_3BYTE_BGR);
        bgr.setRGB(0, 0, 0x102030);
        bgr.setRGB(1, 0, 0xfffefd);
        assertArrayEquals(new byte[] {0x10, 0x20, 0x30, (byte) 0xff, (byte) 0xfe, (byte) 0xfd}, ImageLoader.of(bgr).rgb());
        BufferedImage argb = new BufferedImage(1, 1, BufferedImage.TYPE_INT_ARGB);
        argb.setRGB(0, 0, 0x80000000); // black at alpha 128 over white
        assertArrayEquals(new byte[] {127, 127, 127}, ImageLoader.of(argb).rgb());
        BufferedImage pre = new BufferedImage(1, 1, BufferedImage.TYPE_INT_ARGB_PRE);
        pre.setRGB(0, 0, 0x80c80000); // red 200 at alpha 128, stored premultiplied: composited from the straight value
        assertArrayEquals(new byte[] {(byte) ImageLoader.overWhite(200, 128), 127, 127}, ImageLoader.of(pre).rgb());
        BufferedImage gray = new BufferedImage(1, 1, BufferedImage.TYPE_BYTE_GRAY);
        gray.getRaster().setSample(0, 0, 0, 100);
        // the stored sample, not a linear-to-sRGB conversion of it (Pillow's L to RGB copies)
        assertArrayEquals(new byte[] {100, 100, 100}, ImageLoader.of(gray).rgb());
    }

    @Test
    void truncatedFilesAreErrorsNamingTheFile(@TempDir Path tmp) throws Exception {
        for (String f : new String[] {"rgb.png", "photo.jpg", "lossless.webp", "image.bmp"}) {
            byte[] all = Files.readAllBytes(DIR.resolve(f));
            Path cut = tmp.resolve("cut-" + f);
            Files.write(cut, Arrays.copyOf(all, all.length / 2));
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> ImageLoader.read(cut), f);
            assertTrue(e.getMessage().startsWith(cut.toString()), e.getMessage());
        }
    }

    @Test
    void notAnImageIsAnErrorNamingTheFile(@TempDir Path tmp) throws Exception {
        Path text = tmp.resolve("notes.png");
        Files.writeString(text, "this is not a picture");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ImageLoader.read(text));
        assertTrue(e.getMessage().startsWith(text.toString()) && e.getMessage().contains("not an image"), e.getMessage());
        Path empty = tmp.resolve("empty.jpg");
        Files.write(empty, new byte[0]);
        assertTrue(assertThrows(EdgeLmException.class, () -> ImageLoader.read(empty)).getMessage().startsWith(empty.toString()));
        Path missing = tmp.resolve("missing.png");
        assertTrue(assertThrows(EdgeLmException.class, () -> ImageLoader.read(missing)).getMessage().contains("no such"));
        EdgeLmException b = assertThrows(EdgeLmException.class,
                () -> ImageLoader.read("GIF89a but nothing else".getBytes(StandardCharsets.US_ASCII), "upload-3"));
        assertTrue(b.getMessage().startsWith("upload-3"), b.getMessage());
    }

    @Test
    void aLyingHeaderIsRefusedBeforeDecoding() throws Exception {
        // a valid 1 x 1 PNG whose IHDR is rewritten to claim 100000 x 100000 pixels (CRC fixed up)
        BufferedImage one = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(one, "png", out);
        byte[] png = out.toByteArray();
        java.nio.ByteBuffer.wrap(png, 16, 8).putInt(100_000).putInt(100_000);
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(png, 12, 17);
        java.nio.ByteBuffer.wrap(png, 29, 4).putInt((int) crc.getValue());
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ImageLoader.read(png, "bomb.png"));
        assertTrue(e.getMessage().startsWith("bomb.png") && e.getMessage().contains("100000x100000"), e.getMessage());
    }

    @Test
    void imageIoWrittenPngRoundTrips() throws Exception {
        BufferedImage img = new BufferedImage(3, 2, BufferedImage.TYPE_INT_RGB);
        for (int i = 0; i < 6; i++) {
            img.setRGB(i % 3, i / 3, 0x010203 * (i * 40));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(img, "png", out);
        RgbImage r = ImageLoader.read(out.toByteArray(), "mem.png");
        for (int i = 0; i < 6; i++) {
            int v = 0x010203 * (i * 40);
            assertEquals((v >> 16) & 0xff, r.at(i % 3, i / 3, 0));
            assertEquals(v & 0xff, r.at(i % 3, i / 3, 2));
        }
    }
}
