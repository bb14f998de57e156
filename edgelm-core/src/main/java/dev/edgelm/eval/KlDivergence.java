package dev.edgelm.eval;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * llama-perplexity's {@code --kl-divergence}: the model under test evaluated on the chunks of a base file
 * ({@link LogitsFile}) and compared, token by token, with the base model's stored log-probabilities. Every
 * per-token quantity and every statistic follows llama.cpp's {@code kl_divergence()} step by step (the same
 * float and double operations), so the figures can be put side by side with its output.
 */
public final class KlDivergence {
    private KlDivergence() {}

    /** A value and its uncertainty. */
    public record Estimate(double value, double uncertainty) {}

    /** The running figures printed after each chunk. */
    public record ChunkRow(int chunk, Estimate ppl, Estimate lnPplRatio, Estimate kld, Estimate deltaPRms, Estimate sameTop) {}

    /** Percentiles in llama.cpp's order (label, fraction; the median and the extremes included). */
    public record Percentile(String label, double value) {}

    public record Statistics(long count, Estimate pplQ, Estimate pplBase, double corLnPpl, Estimate lnPplRatio,
                             Estimate pplRatio, Estimate pplDiff, Estimate meanKld, List<Percentile> kldPercentiles,
                             Estimate meanDeltaP, List<Percentile> deltaPPercentiles, Estimate rmsDeltaP, Estimate sameTop) {}

    public record Result(int nCtx, int chunks, List<ChunkRow> rows, Statistics statistics, float[] kldValues,
                         float[] deltaPValues, boolean complete) {}

    /** The sums of llama.cpp's {@code kl_divergence_result}. */
    static final class Sums {
        double sumNll;
        double sumNll2;
        double sumNllBase;
        double sumNllBase2;
        double sumNllNllBase;
        double sumKld;
        double sumKld2;
        double sumPDiff;
        double sumPDiff2;
        double sumPDiff4;
        float maxPDiff;
        long sameTop;
        long count;

        /**
         * One scored token: the model's logits against the base row; returns {KLD, delta p} as llama.cpp's
         * {@code log_softmax(n_vocab, logits, base_log_prob, tok, kld)}.
         */
        float[] add(float[] logits, int off, int vocab, char[] base, int tok) {
            float max = logits[off];
            int imax = 0;
            for (int i = 1; i < vocab; i++) {
                if (logits[off + i] > max) {
                    max = logits[off + i];
                    imax = i;
                }
            }
            double sumExp = 0;
            for (int i = 0; i < vocab; i++) {
                sumExp += (float) Math.exp(logits[off + i] - max);
            }
            float logSumExp = (float) Math.log(sumExp);
            float scale = LogitsFile.scale(base);
            float minLogProb = LogitsFile.minLogProb(base);
            float nll = max + logSumExp - logits[off + tok];
            sumNll += nll;
            sumNll2 += nll * nll;
            float nllBase = -(scale * base[4 + tok] + minLogProb);
            sumNllBase += nllBase;
            sumNllBase2 += nllBase * nllBase;
            sumNllNllBase += nll * nllBase;
            float maxLog = max + logSumExp;
            double sum = 0;
            int imaxBase = -1;
            float pLogBaseMax = 0;
            for (int i = 0; i < vocab; i++) {
                float pLogBase = scale * base[4 + i] + minLogProb;
                if (i == 0 || pLogBase > pLogBaseMax) {
                    pLogBaseMax = pLogBase;
                    imaxBase = i;
                }
                if (pLogBase > -LogitsFile.FLOOR_NATS) {
                    float pBase = (float) Math.exp(pLogBase);
                    sum += pBase * (pLogBase - logits[off + i] + maxLog);
                }
            }
            sumKld += sum;
            sumKld2 += sum * sum;
            count++;
            if (imax == imaxBase) {
                sameTop++;
            }
            float pBase = (float) Math.exp(-nllBase);
            float p = (float) Math.exp(-nll);
            float pDiff = p - pBase;
            sumPDiff += pDiff;
            double pDiff2 = pDiff * pDiff;
            sumPDiff2 += pDiff2;
            sumPDiff4 += pDiff2 * pDiff2;
            maxPDiff = Math.max(maxPDiff, Math.abs(pDiff));
            return new float[] {(float) sum, pDiff};
        }

        ChunkRow row(int chunk) {
            Estimate logPpl = meanAndUncertainty(sumNll, sumNll2, count);
            Estimate logPplBase = meanAndUncertainty(sumNllBase, sumNllBase2, count);
            double cov = covariance(sumNll, sumNllBase, sumNllNllBase, count);
            Estimate ratio = lnRatio(logPpl, logPplBase, cov);
            Estimate kld = meanAndUncertainty(sumKld, sumKld2, count);
            Estimate mse = meanAndUncertainty(sumPDiff2, sumPDiff4, count);
            double rms = Math.sqrt(mse.value());
            double top = (double) sameTop / count;
            return new ChunkRow(chunk, new Estimate(Math.exp(logPpl.value()), Math.exp(logPpl.value()) * logPpl.uncertainty()),
                    ratio, kld, new Estimate(rms, 0.5 / rms * mse.uncertainty()),
                    new Estimate(top, Math.sqrt(top * (1 - top) / (count - 1))));
        }
    }

    static Estimate meanAndUncertainty(double sum, double sum2, long count) {
        if (count < 1) {
            return new Estimate(0, 0);
        }
        double f = sum / count;
        double df = sum2 / count - f * f;
        df = df > 0 && count > 10 ? Math.sqrt(df / (count - 1)) : 0;
        return new Estimate(f, df);
    }

    static double covariance(double a, double b, double ab, long count) {
        if (count < 10) {
            return 0;
        }
        double v = ab / count - (a / count) * (b / count);
        return v / (count - 1);
    }

    private static Estimate lnRatio(Estimate logPpl, Estimate logPplBase, double cov) {
        return new Estimate(logPpl.value() - logPplBase.value(), Math.sqrt(logPpl.uncertainty() * logPpl.uncertainty()
                + logPplBase.uncertainty() * logPplBase.uncertainty() - 2.0 * cov));
    }

    /** llama.cpp's percentile of sorted values: linear between neighbours, in float. */
    static float percentile(float[] sorted, float fraction) {
        if (fraction <= 0) {
            return sorted[0];
        }
        if (fraction >= 1) {
            return sorted[sorted.length - 1];
        }
        float p = fraction * (float) (sorted.length - 1);
        int ip = (int) p;
        p -= ip;
        return (1 - p) * sorted[ip] + p * sorted[Math.min(ip + 1, sorted.length - 1)];
    }

    static float median(float[] sorted) {
        int n = sorted.length;
        return n % 2 == 0 ? 0.5f * (sorted[n / 2] + sorted[n / 2 - 1]) : sorted[n / 2];
    }

    /** Evaluates {@code m} on every chunk of {@code base} and compares. Stops early (not {@code complete}) on {@code stop}. */
    public static Result run(ScoringModel m, LogitsFile.Reader base, Progress progress, Stop stop) {
        LogitsFile.Header h = base.header();
        int vocab = m.vocabSize();
        if (h.nVocab() != vocab) {
            throw new EdgeLmException("inconsistent vocabulary: the base file has " + h.nVocab() + " tokens, " + m.path()
                    + " has " + vocab);
        }
        int scored = h.scoredPerChunk();
        int first = h.nCtx() / 2;
        ChunkScorer scorer = new ChunkScorer(m.model(), h.nCtx(), m.addBos() ? m.bosId() : -1);
        Sums sums = new Sums();
        float[] kld = new float[scored * h.nChunk()];
        float[] dp = new float[kld.length];
        List<ChunkRow> rows = new ArrayList<>();
        progress.update(0, h.nChunk(), "chunks");
        for (int c = 0; c < h.nChunk() && !stop.requested(); c++) {
            char[][] baseRows = base.nextChunk();
            int[] chunk = h.chunk(c);
            int at = c * scored;
            scorer.score(chunk, (k, logits, off) -> {
                float[] v = sums.add(logits, off, vocab, baseRows[k], chunk[first + k + 1]);
                kld[at + k] = v[0];
                dp[at + k] = v[1];
            });
            rows.add(sums.row(c + 1));
            progress.update(c + 1, h.nChunk(), "chunks");
        }
        int n = rows.size() * scored;
        float[] kldValues = Arrays.copyOf(kld, n);
        float[] dpValues = Arrays.copyOf(dp, n);
        Statistics stats = sums.count < 100 ? null : statistics(sums, kldValues, dpValues);
        return new Result(h.nCtx(), rows.size(), List.copyOf(rows), stats, kldValues, dpValues, rows.size() == h.nChunk());
    }

    /** The three summary blocks llama-perplexity prints (it needs at least 100 tokens). */
    static Statistics statistics(Sums s, float[] kldValues, float[] dpValues) {
        float[] kld = kldValues.clone();
        float[] dp = dpValues.clone();
        Arrays.sort(kld);
        Arrays.sort(dp);
        Estimate logPpl = meanAndUncertainty(s.sumNll, s.sumNll2, s.count);
        double ppl = Math.exp(logPpl.value());
        double pplUnc = ppl * logPpl.uncertainty();
        Estimate logBase = meanAndUncertainty(s.sumNllBase, s.sumNllBase2, s.count);
        double pplBase = Math.exp(logBase.value());
        double pplBaseUnc = pplBase * logBase.uncertainty();
        double cov = covariance(s.sumNll, s.sumNllBase, s.sumNllNllBase, s.count);
        double cor = cov / (logPpl.uncertainty() * logBase.uncertainty());
        Estimate ratio = lnRatio(logPpl, logBase, cov);
        double pplRatio = Math.exp(ratio.value());
        double pplCov = ppl * pplBase * cov;
        Estimate diff = new Estimate(ppl - pplBase, Math.sqrt(pplUnc * pplUnc + pplBaseUnc * pplBaseUnc - 2.0 * pplCov));
        List<Percentile> kp = List.of(
                new Percentile("Maximum", kld[kld.length - 1]),
                new Percentile("99.9%", percentile(kld, 0.999f)),
                new Percentile("99.0%", percentile(kld, 0.990f)),
                new Percentile("95.0%", percentile(kld, 0.950f)),
                new Percentile("90.0%", percentile(kld, 0.900f)),
                new Percentile("Median", median(kld)),
                new Percentile("10.0%", percentile(kld, 0.100f)),
                new Percentile("5.0%", percentile(kld, 0.050f)),
                new Percentile("1.0%", percentile(kld, 0.010f)),
                new Percentile("0.1%", percentile(kld, 0.001f)),
                new Percentile("Minimum", kld[0]));
        List<Percentile> dpp = List.of(
                new Percentile("Maximum", dp[dp.length - 1]),
                new Percentile("99.9%", percentile(dp, 0.999f)),
                new Percentile("99.0%", percentile(dp, 0.990f)),
                new Percentile("95.0%", percentile(dp, 0.950f)),
                new Percentile("90.0%", percentile(dp, 0.900f)),
                new Percentile("75.0%", percentile(dp, 0.750f)),
                new Percentile("Median", median(dp)),
                new Percentile("25.0%", percentile(dp, 0.250f)),
                new Percentile("10.0%", percentile(dp, 0.100f)),
                new Percentile("5.0%", percentile(dp, 0.050f)),
                new Percentile("1.0%", percentile(dp, 0.010f)),
                new Percentile("0.1%", percentile(dp, 0.001f)),
                new Percentile("Minimum", dp[0]));
        Estimate mse = meanAndUncertainty(s.sumPDiff2, s.sumPDiff4, s.count);
        double rms = Math.sqrt(mse.value());
        double top = (double) s.sameTop / s.count;
        return new Statistics(s.count, new Estimate(ppl, pplUnc), new Estimate(pplBase, pplBaseUnc), cor, ratio,
                new Estimate(pplRatio, pplRatio * ratio.uncertainty()), diff,
                meanAndUncertainty(s.sumKld, s.sumKld2, s.count), kp,
                meanAndUncertainty(s.sumPDiff, s.sumPDiff2, s.count), dpp, new Estimate(rms, 0.5 / rms * mse.uncertainty()),
                new Estimate(top, Math.sqrt(top * (1.0 - top) / (s.count - 1))));
    }
}
