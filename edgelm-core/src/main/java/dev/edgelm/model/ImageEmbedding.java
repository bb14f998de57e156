package dev.edgelm.model;

import dev.edgelm.util.EdgeLmException;

/**
 * One image as the decoder takes it: its token embeddings [gridRows * gridCols, hidden], row-major over the merged
 * token grid (what the vision tower's merger returns), and that grid's shape, which sets the tokens' 3-D positions.
 */
public record ImageEmbedding(float[] rows, int gridRows, int gridCols) {
    public ImageEmbedding {
        if (gridRows < 1 || gridCols < 1 || rows.length % (gridRows * gridCols) != 0) {
            throw new EdgeLmException("image embedding of " + rows.length + " values does not fit a " + gridRows + "x"
                    + gridCols + " token grid");
        }
    }

    public int tokens() {
        return gridRows * gridCols;
    }
}
