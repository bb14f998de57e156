package dev.edgelm.vision.image;

/**
 * The Qwen2-VL image processor (the PIL-based one the reference goldens follow) for one image:
 * {@link SmartResize smart_resize}, Pillow's bicubic resize of the 8-bit image ({@link BicubicResize}),
 * rescale ({@code float32(u8 * rescale)} computed in double), normalise ({@code (x - mean) / std} in float),
 * repetition along time to fill the temporal patch, and the cut into patch rows in merge-block order.
 */
public final class ImagePreprocessor {
    private final ImageSettings settings;
    /** {@code lut[c * 256 + u8]}: the normalised value of byte {@code u8} in channel {@code c}. */
    private final float[] lut = new float[3 * 256];

    public ImagePreprocessor(ImageSettings settings) {
        this.settings = settings;
        float[] mean = settings.imageMean();
        float[] std = settings.imageStd();
        for (int c = 0; c < 3; c++) {
            for (int v = 0; v < 256; v++) {
                float x = (float) (v * settings.rescaleFactor());
                lut[c * 256 + v] = (x - mean[c]) / std[c];
            }
        }
    }

    public ImageSettings settings() {
        return settings;
    }

    /** The pixel tensor and patch grid of {@code image}. */
    public PixelPatches process(RgbImage image) {
        int[] target = SmartResize.targetSize(image.height(), image.width(), settings);
        RgbImage resized = BicubicResize.resize(image, target[1], target[0]);
        return patches(resized);
    }

    /** Cuts an image already at a multiple of the factor into patch rows (no resize). */
    PixelPatches patches(RgbImage img) {
        int p = settings.patchSize();
        int m = settings.mergeSize();
        int t = settings.temporalPatchSize();
        int gridH = img.height() / p;
        int gridW = img.width() / p;
        if (gridH * p != img.height() || gridW * p != img.width() || gridH % m != 0 || gridW % m != 0) {
            throw new IllegalArgumentException("image " + img.width() + "x" + img.height() + " is not a multiple of " + settings.factor());
        }
        int pp = p * p;
        int dim = 3 * t * pp;
        int patches = gridH * gridW;
        float[] out = new float[Math.multiplyExact(patches, dim)];
        byte[] rgb = img.rgb();
        int width = img.width();
        int row = 0;
        for (int bh = 0; bh < gridH / m; bh++) {
            for (int bw = 0; bw < gridW / m; bw++) {
                for (int mh = 0; mh < m; mh++) {
                    for (int mw = 0; mw < m; mw++, row++) {
                        int y0 = (bh * m + mh) * p;
                        int x0 = (bw * m + mw) * p;
                        int base = row * dim;
                        for (int py = 0; py < p; py++) {
                            int src = ((y0 + py) * width + x0) * 3;
                            int dstRow = base + py * p;
                            for (int px = 0; px < p; px++, src += 3) {
                                int d = dstRow + px;
                                out[d] = lut[rgb[src] & 0xff];
                                out[d + t * pp] = lut[256 + (rgb[src + 1] & 0xff)];
                                out[d + 2 * t * pp] = lut[512 + (rgb[src + 2] & 0xff)];
                            }
                        }
                        // the still image repeated along time: frames 1..t-1 equal frame 0, per channel
                        for (int c = 0; c < 3; c++) {
                            int frame0 = base + c * t * pp;
                            for (int f = 1; f < t; f++) {
                                System.arraycopy(out, frame0, out, frame0 + f * pp, pp);
                            }
                        }
                    }
                }
            }
        }
        return new PixelPatches(out, 1, gridH, gridW, m);
    }
}
