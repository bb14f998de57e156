package dev.edgelm.eval;

import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;

/**
 * llama-perplexity's perplexity: the tokens cut into {@code min(chunks, tokens / nCtx)} non-overlapping chunks
 * of {@code nCtx}, each evaluated from a fresh state and scored on its second half ({@link ChunkScorer}).
 * {@code NLL = max + log(sum exp(l - max)) - l[next]}, {@code PPL = exp(mean NLL)}, and its uncertainty
 * {@code PPL * sqrt((E[nll^2] - E[nll]^2) / (count - 1))}, with llama.cpp's float and double steps.
 */
public final class Perplexity {
    private Perplexity() {}

    /**
     * @param nCtx        tokens per chunk
     * @param chunks      at most this many chunks (-1: as many as the text holds)
     * @param textTokens  tokens of the whole text
     * @param runningPpl  the running estimate after each chunk (llama.cpp's {@code [i]ppl,})
     * @param scored      tokens scored
     */
    public record Result(int nCtx, int chunks, int textTokens, int scored, double[] runningPpl, double ppl,
                         double uncertainty, boolean complete) {
        public double[] runningPpl() {
            return runningPpl.clone();
        }
    }

    /** Chunks a text of {@code tokens} tokens gives, or an error saying it is too short (llama.cpp needs 2 chunks' worth). */
    public static int chunkCount(int tokens, int nCtx, int maxChunks) {
        if (nCtx < 4) {
            throw new EdgeLmException("--ctx must be at least 4, got " + nCtx);
        }
        if (maxChunks == 0 || maxChunks < -1) {
            throw new EdgeLmException("--chunks must be at least 1, got " + maxChunks);
        }
        if (tokens < 2 * nCtx) {
            throw new EdgeLmException("the text tokenizes to " + tokens + " tokens; a context of " + nCtx + " needs at least "
                    + 2 * nCtx);
        }
        int max = tokens / nCtx;
        return maxChunks < 0 ? max : Math.min(maxChunks, max);
    }

    /**
     * Runs the perplexity loop; with {@code base} (may be null) the log-probabilities are also written to a
     * KL-divergence base file, the caller commits it. Stops early (result not {@code complete}) on {@code stop}.
     */
    public static Result run(ScoringModel m, int[] tokens, int nCtx, int maxChunks, LogitsFile.Writer base,
                             Progress progress, Stop stop) {
        int nChunk = chunkCount(tokens.length, nCtx, maxChunks);
        int vocab = m.vocabSize();
        ChunkScorer scorer = new ChunkScorer(m.model(), nCtx, m.addBos() ? m.bosId() : -1);
        int first = nCtx / 2;
        char[] row = new char[LogitsFile.rowUnits(vocab)];
        double[] sums = new double[2]; // nll, nll^2
        double[] running = new double[nChunk];
        int count = 0;
        int done = 0;
        progress.update(0, nChunk, "chunks");
        for (int c = 0; c < nChunk && !stop.requested(); c++) {
            int[] chunk = Arrays.copyOfRange(tokens, c * nCtx, (c + 1) * nCtx);
            scorer.score(chunk, (k, logits, off) -> {
                int next = chunk[first + k + 1];
                double v = base != null ? LogitsFile.encode(logits, off, vocab, next, row) : -logSoftmax(logits, off, vocab, next);
                if (base != null) {
                    base.writeRow(row);
                }
                sums[0] += v;
                sums[1] += v * v;
            });
            count += nCtx - first - 1;
            running[c] = Math.exp(sums[0] / count);
            done = c + 1;
            progress.update(done, nChunk, "chunks");
        }
        if (done == 0) {
            return new Result(nCtx, 0, tokens.length, 0, new double[0], Double.NaN, Double.NaN, false);
        }
        double nll = sums[0] / count;
        double nll2 = sums[1] / count - nll * nll;
        double ppl = Math.exp(nll);
        double unc = nll2 > 0 ? Math.sqrt(nll2 / (count - 1)) * ppl : Double.NaN;
        return new Result(nCtx, done, tokens.length, count, Arrays.copyOf(running, done), ppl, unc, done == nChunk);
    }

    /** llama.cpp's {@code log_softmax(n_vocab, logits, tok)}: {@code l[tok] - max} in float, then less {@code log(sum)} in double. */
    static double logSoftmax(float[] logits, int off, int vocab, int tok) {
        float max = logits[off];
        for (int i = 1; i < vocab; i++) {
            max = Math.max(max, logits[off + i]);
        }
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += (float) Math.exp(logits[off + i] - max);
        }
        return (logits[off + tok] - max) - Math.log(sum);
    }
}
