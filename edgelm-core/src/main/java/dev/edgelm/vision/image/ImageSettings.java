package dev.edgelm.vision.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The image processor's settings (the Qwen2-VL image processor, which Qwen3.5 uses): patch size, temporal
 * patch size (frames per patch; a still image is repeated to fill them), spatial merge size, per-channel
 * mean and standard deviation, the rescale factor and the pixel-count bounds of {@code smart_resize}.
 */
public record ImageSettings(int patchSize, int temporalPatchSize, int mergeSize, float[] imageMean, float[] imageStd,
                            double rescaleFactor, long minPixels, long maxPixels) {

    /** Qwen3.5's released processor: patch 16, temporal 2, merge 2, mean = std = 0.5, 65536 to 16777216 pixels. */
    public static final ImageSettings QWEN35 = new ImageSettings(16, 2, 2, new float[] {0.5f, 0.5f, 0.5f},
            new float[] {0.5f, 0.5f, 0.5f}, 1.0 / 255, 65536, 16777216);

    /** The mmproj metadata keys (as llama.cpp's converter and {@code clip.cpp} name them). */
    public static final String KEY_PATCH_SIZE = "clip.vision.patch_size";
    public static final String KEY_MERGE_SIZE = "clip.vision.spatial_merge_size";
    public static final String KEY_IMAGE_MEAN = "clip.vision.image_mean";
    public static final String KEY_IMAGE_STD = "clip.vision.image_std";
    public static final String KEY_MIN_PIXELS = "clip.vision.image_min_pixels";
    public static final String KEY_MAX_PIXELS = "clip.vision.image_max_pixels";

    public ImageSettings {
        if (patchSize <= 0 || temporalPatchSize <= 0 || mergeSize <= 0) {
            throw new EdgeLmException("image settings: patch " + patchSize + ", temporal patch " + temporalPatchSize
                    + ", merge " + mergeSize + " must be positive");
        }
        if (imageMean.length != 3 || imageStd.length != 3) {
            throw new EdgeLmException("image settings: image_mean and image_std need 3 values (RGB), got "
                    + imageMean.length + " and " + imageStd.length);
        }
        for (float s : imageStd) {
            if (!(s > 0)) {
                throw new EdgeLmException("image settings: image_std " + Arrays.toString(imageStd) + " must be positive");
            }
        }
        if (!(rescaleFactor > 0)) {
            throw new EdgeLmException("image settings: rescale factor " + rescaleFactor + " must be positive");
        }
        checkBounds(minPixels, maxPixels);
        imageMean = imageMean.clone();
        imageStd = imageStd.clone();
    }

    @Override
    public float[] imageMean() {
        return imageMean.clone();
    }

    @Override
    public float[] imageStd() {
        return imageStd.clone();
    }

    /** Side lengths are multiples of this: patch x merge (32 for Qwen3.5). */
    public int factor() {
        return patchSize * mergeSize;
    }

    /** The same settings with other {@code smart_resize} bounds (the processor's {@code min_pixels} / {@code max_pixels}). */
    public ImageSettings withPixelBounds(long min, long max) {
        return new ImageSettings(patchSize, temporalPatchSize, mergeSize, imageMean, imageStd, rescaleFactor, min, max);
    }

    /**
     * Reads a checkpoint's {@code preprocessor_config.json}: {@code patch_size}, {@code temporal_patch_size},
     * {@code merge_size}, {@code image_mean}, {@code image_std}, {@code rescale_factor} and the bounds from
     * {@code size.shortest_edge} / {@code size.longest_edge}, overridden by top-level {@code min_pixels} /
     * {@code max_pixels} when present (as the processor does). Missing keys take Qwen3.5's values.
     */
    public static ImageSettings fromPreprocessorConfig(Path json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(json));
        } catch (IOException e) {
            throw new EdgeLmException(json + ": cannot read the image processor settings: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new EdgeLmException(json + ": not a JSON object");
        }
        ImageSettings d = QWEN35;
        long min = d.minPixels;
        long max = d.maxPixels;
        JsonNode size = root.path("size");
        if (size.isObject()) {
            min = positiveLong(size, "shortest_edge", min, json, "size.");
            max = positiveLong(size, "longest_edge", max, json, "size.");
        }
        min = positiveLong(root, "min_pixels", min, json, "");
        max = positiveLong(root, "max_pixels", max, json, "");
        int merge = (int) positiveLong(root, "merge_size", positiveLong(root, "spatial_merge_size", d.mergeSize, json, ""), json, "");
        try {
            return new ImageSettings(
                    (int) positiveLong(root, "patch_size", d.patchSize, json, ""),
                    (int) positiveLong(root, "temporal_patch_size", d.temporalPatchSize, json, ""),
                    merge,
                    floats(root, "image_mean", d.imageMean, json),
                    floats(root, "image_std", d.imageStd, json),
                    root.path("rescale_factor").isNumber() ? root.get("rescale_factor").asDouble() : d.rescaleFactor,
                    min, max);
        } catch (EdgeLmException e) {
            throw new EdgeLmException(json + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the settings from a vision projector (mmproj) file's metadata: patch size, spatial merge size, mean
     * and std; the pixel bounds from {@code clip.vision.image_min_pixels} / {@code image_max_pixels} when the
     * file has them, else Qwen3.5's processor bounds; temporal patch 2 (the file splits the patch kernel into
     * its two frames). The rescale factor is 1/255.
     */
    public static ImageSettings fromMmproj(GgufMetadata meta) {
        ImageSettings d = QWEN35;
        try {
            return new ImageSettings(
                    meta.optLong(KEY_PATCH_SIZE).map(Long::intValue).orElse(d.patchSize),
                    d.temporalPatchSize,
                    meta.optLong(KEY_MERGE_SIZE).map(Long::intValue).orElse(d.mergeSize),
                    ggufFloats(meta, KEY_IMAGE_MEAN, d.imageMean),
                    ggufFloats(meta, KEY_IMAGE_STD, d.imageStd),
                    d.rescaleFactor,
                    meta.optLong(KEY_MIN_PIXELS).orElse(d.minPixels),
                    meta.optLong(KEY_MAX_PIXELS).orElse(d.maxPixels));
        } catch (EdgeLmException e) {
            throw new EdgeLmException(meta.source() + ": " + e.getMessage(), e);
        }
    }

    private static void checkBounds(long min, long max) {
        if (min <= 0 || max <= 0) {
            throw new EdgeLmException("image pixel bounds must be positive (min " + min + ", max " + max + ")");
        }
        if (min > max) {
            throw new EdgeLmException("image min pixels " + min + " exceeds max pixels " + max);
        }
    }

    private static long positiveLong(JsonNode node, String key, long fallback, Path json, String prefix) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() <= 0 || v.asLong() > Integer.MAX_VALUE * 64L) {
            throw new EdgeLmException(json + ": " + prefix + key + " = " + v + " is not a positive integer");
        }
        return v.asLong();
    }

    private static float[] floats(JsonNode root, String key, float[] fallback, Path json) {
        JsonNode v = root.get(key);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isArray() || v.size() != 3) {
            throw new EdgeLmException(json + ": " + key + " = " + v + " is not a list of 3 numbers");
        }
        float[] out = new float[3];
        for (int i = 0; i < 3; i++) {
            if (!v.get(i).isNumber()) {
                throw new EdgeLmException(json + ": " + key + " = " + v + " is not a list of 3 numbers");
            }
            out[i] = (float) v.get(i).asDouble();
        }
        return out;
    }

    private static float[] ggufFloats(GgufMetadata meta, String key, float[] fallback) {
        GgufValue v = meta.asMap().get(key);
        if (v == null) {
            return fallback;
        }
        try {
            return v.floats();
        } catch (IllegalStateException e) {
            throw new EdgeLmException(key + " is " + v.describeType() + ", expected array[f32]");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ImageSettings s && patchSize == s.patchSize && temporalPatchSize == s.temporalPatchSize
                && mergeSize == s.mergeSize && Arrays.equals(imageMean, s.imageMean) && Arrays.equals(imageStd, s.imageStd)
                && rescaleFactor == s.rescaleFactor && minPixels == s.minPixels && maxPixels == s.maxPixels;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new long[] {patchSize, temporalPatchSize, mergeSize, Arrays.hashCode(imageMean),
                Arrays.hashCode(imageStd), Double.hashCode(rescaleFactor), minPixels, maxPixels});
    }

    @Override
    public String toString() {
        return "ImageSettings[patch " + patchSize + ", temporal " + temporalPatchSize + ", merge " + mergeSize
                + ", mean " + Arrays.toString(imageMean) + ", std " + Arrays.toString(imageStd) + ", rescale " + rescaleFactor
                + ", pixels " + minPixels + ".." + maxPixels + "]";
    }
}
