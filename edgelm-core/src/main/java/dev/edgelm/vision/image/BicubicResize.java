package dev.edgelm.vision.image;

/**
 * Pillow's {@code Image.resize(size, BICUBIC)} on an 8-bit RGB image, byte for byte: a port of the
 * algorithm of Pillow 11.3's {@code libImaging/Resample.c} (8 bits per channel path). Written here because
 * the reference processor's output depends on these exact bytes; no Java imaging library reproduces them.
 *
 * <p>Separable: a horizontal pass into an 8-bit intermediate image holding only the source rows the
 * vertical pass reads, then a vertical pass. Per output pixel, the filter (cubic convolution, a = -0.5,
 * support 2) is centred at {@code (x + 0.5) * scale}; when shrinking its support is widened by the scale
 * (antialiasing). The weights are normalised to sum 1 in double, then rounded to 22-bit fixed point; each
 * sum starts at one half, is shifted right by 22 and clamped to 0..255.
 */
public final class BicubicResize {
    private static final int PRECISION_BITS = 32 - 8 - 2;
    private static final double SUPPORT = 2.0;

    private BicubicResize() {}

    /** The image resized to {@code width x height}; the same image when the size does not change. */
    public static RgbImage resize(RgbImage in, int width, int height) {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("resize to " + width + "x" + height);
        }
        if (width == in.width() && height == in.height()) {
            return in;
        }
        Coefficients vert = Coefficients.of(in.height(), height);
        int firstRow = vert.bounds[0];
        int lastRow = vert.bounds[2 * (height - 1)] + vert.bounds[2 * (height - 1) + 1];
        byte[] src = in.rgb();
        int srcWidth = in.width();
        int rowOffset = 0;
        if (width != in.width()) {
            Coefficients horiz = Coefficients.of(in.width(), width);
            src = horizontal(in.rgb(), in.width(), firstRow, lastRow - firstRow, width, horiz);
            srcWidth = width;
            rowOffset = firstRow;
        }
        if (height == in.height()) {
            // Pillow's shortcut: only the horizontal pass (then the intermediate holds all rows)
            return new RgbImage(width, height, src);
        }
        return new RgbImage(width, height, vertical(src, srcWidth, rowOffset, height, vert));
    }

    /** Rows {@code [first, first + rows)} of {@code in}, each resampled to {@code outWidth} pixels. */
    private static byte[] horizontal(byte[] in, int inWidth, int first, int rows, int outWidth, Coefficients k) {
        byte[] out = new byte[rows * outWidth * 3];
        int ksize = k.ksize;
        for (int y = 0; y < rows; y++) {
            int lineIn = (y + first) * inWidth * 3;
            int lineOut = y * outWidth * 3;
            for (int xx = 0; xx < outWidth; xx++) {
                int xmin = k.bounds[2 * xx];
                int n = k.bounds[2 * xx + 1];
                int kb = xx * ksize;
                int s0 = 1 << (PRECISION_BITS - 1);
                int s1 = s0;
                int s2 = s0;
                int p = lineIn + xmin * 3;
                for (int x = 0; x < n; x++, p += 3) {
                    int w = k.fixed[kb + x];
                    s0 += (in[p] & 0xff) * w;
                    s1 += (in[p + 1] & 0xff) * w;
                    s2 += (in[p + 2] & 0xff) * w;
                }
                int o = lineOut + xx * 3;
                out[o] = clip8(s0);
                out[o + 1] = clip8(s1);
                out[o + 2] = clip8(s2);
            }
        }
        return out;
    }

    /** Each output row {@code yy} from rows {@code bounds[2 yy] - rowOffset ...} of {@code in}. */
    private static byte[] vertical(byte[] in, int width, int rowOffset, int outHeight, Coefficients k) {
        int stride = width * 3;
        byte[] out = new byte[outHeight * stride];
        int[] acc = new int[stride];
        int ksize = k.ksize;
        for (int yy = 0; yy < outHeight; yy++) {
            int ymin = k.bounds[2 * yy] - rowOffset;
            int n = k.bounds[2 * yy + 1];
            int kb = yy * ksize;
            java.util.Arrays.fill(acc, 1 << (PRECISION_BITS - 1));
            for (int y = 0; y < n; y++) {
                int w = k.fixed[kb + y];
                int line = (ymin + y) * stride;
                for (int i = 0; i < stride; i++) {
                    acc[i] += (in[line + i] & 0xff) * w;
                }
            }
            int o = yy * stride;
            for (int i = 0; i < stride; i++) {
                out[o + i] = clip8(acc[i]);
            }
        }
        return out;
    }

    private static byte clip8(int v) {
        int s = v >> PRECISION_BITS;
        return (byte) (s < 0 ? 0 : Math.min(s, 255));
    }

    /** Pillow's bicubic filter, a = -0.5, with its operation order. */
    static double filter(double x) {
        final double a = -0.5;
        if (x < 0.0) {
            x = -x;
        }
        if (x < 1.0) {
            return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
        }
        if (x < 2.0) {
            return (((x - 5) * x + 8) * x - 4) * a;
        }
        return 0.0;
    }

    /**
     * Pillow's {@code precompute_coeffs} and {@code normalize_coeffs_8bpc} for the whole-image box: per
     * output pixel the first input index and the tap count ({@code bounds}), and {@code ksize} fixed-point
     * weights per output pixel.
     */
    record Coefficients(int ksize, int[] bounds, int[] fixed) {
        static Coefficients of(int inSize, int outSize) {
            // the box is (0, inSize) as floats in Pillow; the arithmetic below is in double as there
            double scale = (double) (float) inSize / outSize;
            double filterscale = Math.max(scale, 1.0);
            double support = SUPPORT * filterscale;
            int ksize = (int) Math.ceil(support) * 2 + 1;
            int[] bounds = new int[outSize * 2];
            int[] fixed = new int[outSize * ksize];
            double[] k = new double[ksize];
            double ss = 1.0 / filterscale;
            for (int xx = 0; xx < outSize; xx++) {
                double center = (xx + 0.5) * scale;
                double ww = 0.0;
                int xmin = (int) (center - support + 0.5);
                if (xmin < 0) {
                    xmin = 0;
                }
                int xmax = (int) (center + support + 0.5);
                if (xmax > inSize) {
                    xmax = inSize;
                }
                xmax -= xmin;
                for (int x = 0; x < xmax; x++) {
                    double w = filter((x + xmin - center + 0.5) * ss);
                    k[x] = w;
                    ww += w;
                }
                for (int x = 0; x < xmax; x++) {
                    if (ww != 0.0) {
                        k[x] /= ww;
                    }
                }
                for (int x = 0; x < ksize; x++) {
                    double v = x < xmax ? k[x] : 0;
                    fixed[xx * ksize + x] = v < 0
                            ? (int) (-0.5 + v * (1 << PRECISION_BITS))
                            : (int) (0.5 + v * (1 << PRECISION_BITS));
                }
                bounds[2 * xx] = xmin;
                bounds[2 * xx + 1] = xmax;
            }
            return new Coefficients(ksize, bounds, fixed);
        }
    }
}
