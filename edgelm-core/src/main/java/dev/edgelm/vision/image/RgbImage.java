package dev.edgelm.vision.image;

/**
 * An 8-bit RGB raster: {@code rgb} holds {@code height} rows of {@code width} pixels, three bytes each
 * (red, green, blue; unsigned), top row first.
 */
public record RgbImage(int width, int height, byte[] rgb) {
    public RgbImage {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("image size " + width + "x" + height);
        }
        if (rgb.length != (long) width * height * 3) {
            throw new IllegalArgumentException("rgb has " + rgb.length + " bytes, expected " + ((long) width * height * 3)
                    + " for " + width + "x" + height);
        }
    }

    /** Channel {@code c} (0 red, 1 green, 2 blue) of pixel (x, y), 0..255. */
    public int at(int x, int y, int c) {
        return rgb[(y * width + x) * 3 + c] & 0xff;
    }
}
