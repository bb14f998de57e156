package dev.edgelm.vision.image;

import dev.edgelm.util.EdgeLmException;

/**
 * The Qwen2-VL processor's {@code smart_resize}: the size an image is resized to before it is cut into
 * patches. Both sides become multiples of {@code factor = patch x merge}, rounded with Python's {@code round}
 * (half to even), at least one factor; an area over {@code maxPixels} is scaled down (floor) and one under
 * {@code minPixels} scaled up (ceil), keeping the aspect ratio; an aspect ratio over 200 is refused.
 */
public final class SmartResize {
    /** The processor's limit on {@code max(h, w) / min(h, w)}. */
    public static final double MAX_ASPECT_RATIO = 200;

    private SmartResize() {}

    /** {@code {height, width}} the image of {@code h x w} pixels is resized to. */
    public static int[] targetSize(int h, int w, ImageSettings s) {
        if (h <= 0 || w <= 0) {
            throw new EdgeLmException("image of " + w + "x" + h + " pixels: both sides must be positive");
        }
        double ratio = (double) Math.max(h, w) / Math.min(h, w);
        if (ratio > MAX_ASPECT_RATIO) {
            throw new EdgeLmException("image of " + w + "x" + h + " pixels: aspect ratio " + String.format("%.1f", ratio)
                    + " is over " + (int) MAX_ASPECT_RATIO + " (the limit of Qwen3.5's image processor)");
        }
        long factor = s.factor();
        long hBar = Math.max(factor, roundHalfEven((double) h / factor) * factor);
        long wBar = Math.max(factor, roundHalfEven((double) w / factor) * factor);
        if (hBar * wBar > s.maxPixels()) {
            double beta = Math.sqrt((double) ((long) h * w) / s.maxPixels());
            hBar = Math.max(factor, (long) Math.floor(h / beta / factor) * factor);
            wBar = Math.max(factor, (long) Math.floor(w / beta / factor) * factor);
        } else if (hBar * wBar < s.minPixels()) {
            double beta = Math.sqrt((double) s.minPixels() / ((long) h * w));
            hBar = (long) Math.ceil(h * beta / factor) * factor;
            wBar = (long) Math.ceil(w * beta / factor) * factor;
        }
        if (hBar > Integer.MAX_VALUE / 4 || wBar > Integer.MAX_VALUE / 4 || hBar * wBar > Integer.MAX_VALUE / 3) {
            throw new EdgeLmException("image of " + w + "x" + h + " pixels: resize target " + wBar + "x" + hBar
                    + " is too large; lower the maximum pixel count");
        }
        return new int[] {(int) hBar, (int) wBar};
    }

    /** Python 3's {@code round(x)} for a float: to the nearest integer, ties to even. */
    static long roundHalfEven(double x) {
        return (long) Math.rint(x);
    }
}
