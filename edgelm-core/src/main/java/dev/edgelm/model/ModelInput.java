package dev.edgelm.model;

import dev.edgelm.util.EdgeLmException;
import java.util.List;

/**
 * A multimodal input of the decoder: token ids, embeddings that replace some tokens' (the image tokens'), and every
 * token's (temporal, height, width) rotary positions. Plain text needs none of this: {@link Qwen35Model#forward}
 * with ids gives position = index on all three streams.
 *
 * @param tokens        the ids (an image token's id is its placeholder, e.g. {@code <|image_pad|>})
 * @param embeddings    replacement rows [k, hidden]
 * @param embeddingRow  per token, its row in {@code embeddings}, or -1 to look the id up
 * @param positions     per token its three positions, stream-major: [3][tokens.length] flattened
 */
public record ModelInput(int[] tokens, float[] embeddings, int[] embeddingRow, int[] positions) {
    public ModelInput {
        if (embeddingRow.length != tokens.length || positions.length != 3 * tokens.length) {
            throw new IllegalArgumentException("rows and positions must cover each of the " + tokens.length + " tokens");
        }
    }

    public int length() {
        return tokens.length;
    }

    public int position(int stream, int token) {
        return positions[stream * tokens.length + token];
    }

    /**
     * Qwen3.5's multimodal positions (the reference's {@code get_rope_index}): text counts up from {@code start};
     * each run of {@code imageToken} ids is the next image of {@code images}, its tokens at (s, s + row, s + col)
     * with s the position the run's first token would have as text; text after an image resumes at the image's
     * largest position + 1. Fails when the runs and the images do not match (naming the image and both counts).
     */
    public static ModelInput withImages(int[] tokens, int imageToken, List<ImageEmbedding> images, int hidden, int start) {
        int n = tokens.length;
        int[] row = new int[n];
        int[] pos = new int[3 * n];
        int total = 0;
        for (ImageEmbedding im : images) {
            if (im.rows().length != im.tokens() * hidden) {
                throw new EdgeLmException("image embedding of " + im.rows().length + " values is not " + im.tokens()
                        + " tokens of width " + hidden);
            }
            total += im.rows().length;
        }
        float[] rows = new float[total];
        int next = start;
        int image = 0;
        int filled = 0;
        int t = 0;
        while (t < n) {
            if (tokens[t] != imageToken) {
                row[t] = -1;
                pos[t] = pos[n + t] = pos[2 * n + t] = next++;
                t++;
                continue;
            }
            int run = t;
            while (run < n && tokens[run] == imageToken) {
                run++;
            }
            int length = run - t;
            if (image >= images.size()) {
                throw new EdgeLmException("the token ids hold more image-token runs than the " + images.size()
                        + " image(s) given (run " + (image + 1) + " at index " + t + ", " + length + " tokens)");
            }
            ImageEmbedding im = images.get(image);
            if (length != im.tokens()) {
                throw new EdgeLmException("image " + (image + 1) + " has " + im.tokens() + " tokens ("
                        + im.gridRows() + "x" + im.gridCols() + ") but its image-token run at index " + t + " has " + length);
            }
            System.arraycopy(im.rows(), 0, rows, filled * hidden, im.rows().length);
            int s = next;
            for (int k = 0; k < length; k++) {
                row[t + k] = filled + k;
                pos[t + k] = s;
                pos[n + t + k] = s + k / im.gridCols();
                pos[2 * n + t + k] = s + k % im.gridCols();
            }
            next = s + Math.max(im.gridRows(), im.gridCols());
            filled += length;
            image++;
            t = run;
        }
        if (image != images.size()) {
            throw new EdgeLmException(images.size() + " image(s) given but the token ids hold " + image + " image-token run(s)");
        }
        return new ModelInput(tokens, rows, row, pos);
    }

    /** The rope delta after this input fed from position {@code start}: (largest position of its last token + 1) - end. */
    int deltaAfter(int offset, int n, int stateEnd) {
        int last = offset + n - 1;
        int max = Math.max(position(0, last), Math.max(position(1, last), position(2, last)));
        return max + 1 - stateEnd;
    }
}
