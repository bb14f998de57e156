package dev.edgelm.cli;

import dev.edgelm.engine.Engine;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;

/** The image options shared by run, score and benchmark: --mmproj, --image-min-pixels, --image-max-pixels. */
final class VisionOptions {
    private VisionOptions() {}

    /** Applies the options; with {@code imagesGiven}, opens the vision tower now so a model without one fails early. */
    static void apply(Engine engine, Path mmproj, Long minPixels, Long maxPixels, boolean imagesGiven) {
        if (minPixels != null && minPixels < 1) {
            throw new EdgeLmException("--image-min-pixels must be >= 1, got " + minPixels);
        }
        if (maxPixels != null && maxPixels < 1) {
            throw new EdgeLmException("--image-max-pixels must be >= 1, got " + maxPixels);
        }
        if (minPixels != null && maxPixels != null && minPixels > maxPixels) {
            throw new EdgeLmException("--image-min-pixels (" + minPixels + ") is above --image-max-pixels (" + maxPixels + ")");
        }
        if (mmproj != null) {
            engine.setProjector(mmproj);
        }
        if (minPixels != null || maxPixels != null) {
            engine.setImagePixelBounds(minPixels, maxPixels);
        }
        if (imagesGiven) {
            engine.vision();
        }
    }
}
