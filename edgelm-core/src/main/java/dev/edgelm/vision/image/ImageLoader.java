package dev.edgelm.vision.image;

import com.twelvemonkeys.imageio.metadata.Directory;
import com.twelvemonkeys.imageio.metadata.Entry;
import com.twelvemonkeys.imageio.metadata.jpeg.JPEG;
import com.twelvemonkeys.imageio.metadata.jpeg.JPEGSegment;
import com.twelvemonkeys.imageio.metadata.jpeg.JPEGSegmentUtil;
import com.twelvemonkeys.imageio.metadata.tiff.TIFF;
import com.twelvemonkeys.imageio.metadata.tiff.TIFFReader;
import dev.edgelm.util.EdgeLmException;
import java.awt.color.ColorSpace;
import java.awt.image.BufferedImage;
import java.awt.image.ColorModel;
import java.awt.image.IndexColorModel;
import java.awt.image.Raster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;

/**
 * Decodes an image file into an 8-bit {@link RgbImage}, the way the reference pipeline sees it (Pillow's
 * {@code open}, {@code ImageOps.exif_transpose}, then transformers' {@code convert_to_rgb}).
 *
 * <ul>
 *   <li>Formats: PNG, JPEG, BMP, GIF (first frame), WebP. Decoding is the JDK's ImageIO with the
 *       TwelveMonkeys plugins (WebP, and a JPEG reader that also reads CMYK / YCCK JPEGs).</li>
 *   <li>JPEG EXIF orientation (tags 2 to 8) is applied, as {@code exif_transpose} does.</li>
 *   <li>RGB and grayscale samples are taken as stored (no colour management, as Pillow); other colour
 *       spaces (CMYK, YCCK) are converted to sRGB by the decoder. 16-bit samples keep their high byte.</li>
 *   <li>Alpha (including a palette's transparent entry) is composited on white with Pillow's
 *       {@code alpha_composite} integer arithmetic.</li>
 * </ul>
 *
 * A file that is not an image in one of these formats, or is cut short, is an {@link EdgeLmException}
 * naming it.
 */
public final class ImageLoader {
    /** Refuses files above this size before reading them (1 GiB). */
    static final long MAX_FILE_BYTES = 1L << 30;
    /**
     * Refuses images with more pixels than this, before decoding them (a lying header cannot exhaust memory):
     * Pillow's decompression-bomb limit, twice its {@code MAX_IMAGE_PIXELS} (about 179 megapixels).
     */
    static final long MAX_PIXELS = 2L * 89_478_485;

    static {
        ImageIO.setUseCache(false);
        ImageIO.scanForPlugins();
    }

    private ImageLoader() {}

    /** Decodes the image file at {@code path}. */
    public static RgbImage read(Path path) {
        byte[] bytes;
        try {
            long size = Files.size(path);
            if (size > MAX_FILE_BYTES) {
                throw new EdgeLmException(path + ": " + size + " bytes is too large for an image (limit " + MAX_FILE_BYTES + ")");
            }
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new EdgeLmException(path + ": no such image file");
        } catch (IOException e) {
            throw new EdgeLmException(path + ": cannot read the image: " + e.getMessage(), e);
        }
        return read(bytes, path.toString());
    }

    /** Decodes an image held in memory; {@code nameForErrors} names it in error messages. */
    public static RgbImage read(byte[] bytes, String nameForErrors) {
        if (bytes.length == 0) {
            throw new EdgeLmException(nameForErrors + ": empty file, not an image");
        }
        BufferedImage image;
        ImageReader reader = null;
        try (ImageInputStream in = ImageIO.createImageInputStream(new ByteArrayInputStream(bytes))) {
            Iterator<ImageReader> readers = ImageIO.getImageReaders(in);
            if (!readers.hasNext()) {
                throw new EdgeLmException(nameForErrors + ": not an image (PNG, JPEG, BMP, GIF or WebP expected)");
            }
            reader = readers.next();
            reader.setInput(in, true, true);
            long pixels = (long) reader.getWidth(0) * reader.getHeight(0);
            if (pixels <= 0 || pixels > MAX_PIXELS) {
                throw new EdgeLmException(nameForErrors + ": image of " + reader.getWidth(0) + "x" + reader.getHeight(0)
                        + " pixels is empty or larger than the limit of " + MAX_PIXELS + " pixels");
            }
            List<String> warnings = new java.util.ArrayList<>();
            reader.addIIOReadWarningListener((r, message) -> warnings.add(message));
            image = reader.read(0);
            for (String w : warnings) {
                // libjpeg only warns on a cut-off stream ("Premature end of JPEG file") and fills the rest in grey
                if (w != null && (w.contains("Premature end") || w.toLowerCase(java.util.Locale.ROOT).contains("truncated"))) {
                    throw new EdgeLmException(nameForErrors + ": the image is truncated (" + w + ")");
                }
            }
        } catch (EdgeLmException e) {
            throw e;
        } catch (OutOfMemoryError e) {
            throw new EdgeLmException(nameForErrors + ": not enough memory to decode the image; give Java more heap (-Xmx)");
        } catch (IOException | RuntimeException e) {
            // ImageIO reports a truncated or corrupt stream as IIOException, EOFException or an unchecked exception
            throw new EdgeLmException(nameForErrors + ": cannot decode the image (truncated or corrupt file): "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        } finally {
            if (reader != null) {
                reader.dispose();
            }
        }
        RgbImage rgb = toRgb(image);
        int orientation = isJpeg(bytes) ? jpegOrientation(bytes) : 1;
        return orient(rgb, orientation);
    }

    /** An in-memory image, converted as a decoded file would be (no EXIF: a {@code BufferedImage} has none). */
    public static RgbImage of(BufferedImage image) {
        return toRgb(image);
    }

    // ---- colour conversion ----

    private static RgbImage toRgb(BufferedImage image) {
        int w = image.getWidth();
        int h = image.getHeight();
        byte[] out = new byte[Math.multiplyExact(Math.multiplyExact(w, h), 3)];
        ColorModel cm = image.getColorModel();
        Raster raster = image.getRaster();
        int csType = cm.getColorSpace().getType();
        int bands = raster.getNumBands();
        boolean direct = !(cm instanceof IndexColorModel) && !cm.isAlphaPremultiplied()
                && ((csType == ColorSpace.TYPE_RGB && (bands == 3 || bands == 4))
                    || (csType == ColorSpace.TYPE_GRAY && (bands == 1 || bands == 2)));
        if (direct) {
            int colour = csType == ColorSpace.TYPE_GRAY ? 1 : 3;
            boolean alpha = cm.hasAlpha() && bands == colour + 1;
            int[] shift = new int[bands];
            for (int b = 0; b < bands; b++) {
                shift[b] = Math.max(0, raster.getSampleModel().getSampleSize(b) - 8);
            }
            int[] row = new int[w * bands];
            for (int y = 0; y < h; y++) {
                raster.getPixels(0, y, w, 1, row);
                for (int x = 0; x < w; x++) {
                    int p = x * bands;
                    int r = row[p] >>> shift[0];
                    int g = colour == 3 ? row[p + 1] >>> shift[1] : r;
                    int b = colour == 3 ? row[p + 2] >>> shift[2] : r;
                    int a = alpha ? row[p + colour] >>> shift[colour] : 255;
                    put(out, (y * w + x) * 3, r, g, b, a);
                }
            }
        } else {
            // palette, CMYK, YCCK and other colour spaces: the decoder's conversion to sRGB
            int[] row = new int[w];
            for (int y = 0; y < h; y++) {
                image.getRGB(0, y, w, 1, row, 0, w);
                for (int x = 0; x < w; x++) {
                    int argb = row[x];
                    put(out, (y * w + x) * 3, (argb >>> 16) & 0xff, (argb >>> 8) & 0xff, argb & 0xff,
                            cm.hasAlpha() ? argb >>> 24 : 255);
                }
            }
        }
        return new RgbImage(w, h, out);
    }

    private static void put(byte[] out, int o, int r, int g, int b, int a) {
        if (a == 255) {
            out[o] = (byte) r;
            out[o + 1] = (byte) g;
            out[o + 2] = (byte) b;
        } else {
            out[o] = (byte) overWhite(r, a);
            out[o + 1] = (byte) overWhite(g, a);
            out[o + 2] = (byte) overWhite(b, a);
        }
    }

    /**
     * One channel of Pillow's {@code alpha_composite(white, rgba)} ({@code libImaging/AlphaComposite.c},
     * 7-bit precision): with an opaque white background its coefficients are {@code a << 7} and
     * {@code (255 - a) << 7}.
     */
    static int overWhite(int c, int a) {
        if (a == 0) {
            return 255;
        }
        int coef1 = a << 7;
        int coef2 = (255 << 7) - coef1;
        int t = c * coef1 + 255 * coef2 + (0x80 << 7);
        return (((t >> 8) + t) >> 8) >> 7;
    }

    // ---- EXIF orientation ----

    private static boolean isJpeg(byte[] b) {
        return b.length > 3 && (b[0] & 0xff) == 0xFF && (b[1] & 0xff) == 0xD8;
    }

    /** The EXIF orientation tag (1 to 8) of a JPEG, 1 when absent or unreadable (as Pillow ignores bad EXIF). */
    static int jpegOrientation(byte[] jpeg) {
        try (ImageInputStream in = ImageIO.createImageInputStream(new ByteArrayInputStream(jpeg))) {
            List<JPEGSegment> exif = JPEGSegmentUtil.readSegments(in, JPEG.APP1, "Exif");
            for (JPEGSegment segment : exif) {
                try (InputStream data = segment.data()) {
                    byte[] body = data.readAllBytes();
                    // after the "Exif" identifier: padding, then the TIFF structure ("MM" or "II")
                    int skip = 0;
                    while (skip + 1 < body.length && skip < 8 && !(body[skip] == body[skip + 1] && (body[skip] == 'M' || body[skip] == 'I'))) {
                        skip++;
                    }
                    try (ImageInputStream tiff = ImageIO.createImageInputStream(
                            new ByteArrayInputStream(body, skip, body.length - skip))) {
                        Directory ifd = new TIFFReader().read(tiff);
                        Entry e = ifd.getEntryById(TIFF.TAG_ORIENTATION);
                        if (e != null && e.getValue() instanceof Number n && n.intValue() >= 1 && n.intValue() <= 8) {
                            return n.intValue();
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return 1;
        }
        return 1;
    }

    /** Applies EXIF orientation {@code o} (Pillow's {@code exif_transpose}). */
    static RgbImage orient(RgbImage in, int o) {
        if (o <= 1 || o > 8) {
            return in;
        }
        int w = in.width();
        int h = in.height();
        boolean swap = o >= 5;
        int ow = swap ? h : w;
        int oh = swap ? w : h;
        byte[] src = in.rgb();
        byte[] dst = new byte[src.length];
        for (int y = 0; y < oh; y++) {
            for (int x = 0; x < ow; x++) {
                int sx;
                int sy;
                switch (o) {
                    case 2 -> { sx = w - 1 - x; sy = y; }            // mirror
                    case 3 -> { sx = w - 1 - x; sy = h - 1 - y; }    // rotate 180
                    case 4 -> { sx = x; sy = h - 1 - y; }            // flip
                    case 5 -> { sx = y; sy = x; }                    // transpose
                    case 6 -> { sx = y; sy = h - 1 - x; }            // rotate 90 clockwise
                    case 7 -> { sx = w - 1 - y; sy = h - 1 - x; }    // transverse
                    default -> { sx = w - 1 - y; sy = x; }           // 8: rotate 90 counter-clockwise
                }
                int s = (sy * w + sx) * 3;
                int d = (y * ow + x) * 3;
                dst[d] = src[s];
                dst[d + 1] = src[s + 1];
                dst[d + 2] = src[s + 2];
            }
        }
        return new RgbImage(ow, oh, dst);
    }
}
