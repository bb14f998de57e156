package dev.edgelm.vision;

import dev.edgelm.util.EdgeLmException;

/**
 * One image's patch grid: {@code t} temporal patches (1 for a still image), {@code h x w} spatial patches.
 * Its rows in the pixel tensor run (t, block row, block col, row in block, col in block) with merge x merge blocks.
 */
public record PatchGrid(int t, int h, int w) {
    /** An image already preprocessed: its pixel patches [patches, patchDim] and their grid. */
    public record Pixels(float[] values, PatchGrid grid) {}

    public PatchGrid {
        if (t < 1 || h < 1 || w < 1) {
            throw new EdgeLmException("image patch grid " + t + "x" + h + "x" + w + " must be positive");
        }
    }

    public int patches() {
        return t * h * w;
    }

    /** Image tokens after the merger. */
    public int tokens(int merge) {
        return patches() / (merge * merge);
    }

    void check(int merge) {
        if (h % merge != 0 || w % merge != 0) {
            throw new EdgeLmException("image patch grid " + h + "x" + w + " is not a multiple of the merge size " + merge);
        }
    }

    /** Spatial row of patch {@code i} (within one temporal slice) in merge-block order. */
    int row(int i, int merge) {
        int blocksW = w / merge;
        int block = i / (merge * merge);
        return block / blocksW * merge + i % (merge * merge) / merge;
    }

    /** Spatial column of patch {@code i} (within one temporal slice) in merge-block order. */
    int col(int i, int merge) {
        int blocksW = w / merge;
        int block = i / (merge * merge);
        return block % blocksW * merge + i % merge;
    }
}
