package dev.edgelm.eval;

import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;

/**
 * llama-perplexity's evaluation of one chunk: a fresh state, the chunk fed from its first token (BOS in its place
 * when the vocabulary adds one), and the logits of the second half handed on: positions {@code n/2 .. n-2}, each
 * predicting the token after it. The first half runs without logits; the second in pieces, so memory stays at
 * {@value #PIECE} rows of the vocabulary.
 */
final class ChunkScorer {
    /** Rows of logits computed per forward call in the scored half. */
    static final int PIECE = 64;
    private static final int UNSCORED_PIECE = 512;

    /** Receives the logits of scored position {@code first + k} at {@code logits[off .. off+vocab)}. */
    interface Rows {
        void row(int k, float[] logits, int off);
    }

    private final Qwen35Model model;
    private final SequenceState state;
    private final int nCtx;
    private final int bos;

    /** @param bos the id put in place of each chunk's first token, or -1 to keep it */
    ChunkScorer(Qwen35Model model, int nCtx, int bos) {
        this.model = model;
        this.nCtx = nCtx;
        this.bos = bos;
        this.state = model.newState(nCtx);
    }

    void score(int[] chunk, Rows rows) {
        if (chunk.length != nCtx) {
            throw new IllegalArgumentException("chunk of " + chunk.length + " tokens, expected " + nCtx);
        }
        int[] ids = chunk.clone();
        if (bos >= 0) {
            ids[0] = bos;
        }
        state.reset();
        int first = nCtx / 2;
        for (int p = 0; p < first; p += UNSCORED_PIECE) {
            model.forward(state, ids, p, Math.min(UNSCORED_PIECE, first - p), Qwen35Model.Logits.NONE);
        }
        int vocab = model.config().vocabSize();
        int last = nCtx - 1; // the chunk's last token predicts nothing inside it: it is not fed
        for (int p = first; p < last; p += PIECE) {
            int n = Math.min(PIECE, last - p);
            float[] logits = model.forward(state, ids, p, n, Qwen35Model.Logits.ALL);
            for (int j = 0; j < n; j++) {
                rows.row(p - first + j, logits, j * vocab);
            }
        }
    }
}
