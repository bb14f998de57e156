package dev.edgelm.vision.image;

/**
 * What the vision tower consumes for one image: {@code values} is a row-major
 * {@code [patchCount, patchDim]} float tensor, one row per patch flattened as (channel, time, y, x), rows
 * in (t, block row, block column, row in block, column in block) order with
 * {@code mergeSize x mergeSize} merge blocks (the reference processor's {@code pixel_values}); the grid
 * (t, h, w) counts patches ({@code image_grid_thw}).
 */
public record PixelPatches(float[] values, int gridT, int gridH, int gridW, int mergeSize) {
    public PixelPatches {
        if (gridT <= 0 || gridH <= 0 || gridW <= 0 || mergeSize <= 0 || gridH % mergeSize != 0 || gridW % mergeSize != 0) {
            throw new IllegalArgumentException("grid " + gridT + "x" + gridH + "x" + gridW + ", merge " + mergeSize);
        }
        if (values.length % ((long) gridT * gridH * gridW) != 0) {
            throw new IllegalArgumentException(values.length + " values do not split into " + ((long) gridT * gridH * gridW) + " patches");
        }
    }

    /** Rows of {@link #values()}: t x h x w. */
    public int patchCount() {
        return gridT * gridH * gridW;
    }

    /** Values per patch row: channels x temporal patch x patch x patch (1536 for Qwen3.5). */
    public int patchDim() {
        return values.length / patchCount();
    }

    /** Image tokens the merger makes: one per merge block, {@code t * (h / merge) * (w / merge)}. */
    public int mergedTokenCount() {
        return gridT * (gridH / mergeSize) * (gridW / mergeSize);
    }
}
