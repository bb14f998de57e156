package dev.edgelm.eval;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** llama-perplexity's printed output, line for line, for {@link Perplexity} and {@link KlDivergence} results. */
public final class EvalTables {
    private EvalTables() {}

    /** {@code [1]ppl,[2]ppl,...} and {@code Final estimate: PPL = X +/- Y}. */
    public static String perplexity(Perplexity.Result r) {
        StringBuilder sb = new StringBuilder();
        double[] running = r.runningPpl();
        for (int i = 0; i < running.length; i++) {
            sb.append(String.format(Locale.ROOT, "[%d]%.4f,", i + 1, running[i]));
        }
        sb.append('\n');
        if (r.chunks() > 0) {
            sb.append(String.format(Locale.ROOT, "Final estimate: PPL = %.4f +/- %.5f%n", r.ppl(), r.uncertainty()));
        }
        return sb.toString();
    }

    /** The per-chunk table and the three summary blocks. */
    public static String kld(KlDivergence.Result r) {
        StringBuilder sb = new StringBuilder();
        sb.append("chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n");
        for (KlDivergence.ChunkRow row : r.rows()) {
            sb.append(String.format(Locale.ROOT, "%4d    %9.4f ± %9.4f    %10.5f ± %10.5f    %10.5f ± %10.5f    %6.3f ± %6.3f %%    %6.3f ± %6.3f %%%n",
                    row.chunk(), row.ppl().value(), row.ppl().uncertainty(), row.lnPplRatio().value(), row.lnPplRatio().uncertainty(),
                    row.kld().value(), row.kld().uncertainty(), 100 * row.deltaPRms().value(), 100 * row.deltaPRms().uncertainty(),
                    100 * row.sameTop().value(), 100 * row.sameTop().uncertainty()));
        }
        KlDivergence.Statistics s = r.statistics();
        if (s == null) {
            sb.append("\n(fewer than 100 scored tokens: no statistics, as llama-perplexity)\n");
            return sb.toString();
        }
        sb.append("\n====== Perplexity statistics ======\n");
        sb.append(f("Mean PPL(Q)                   : %10.6f ± %10.6f%n", s.pplQ().value(), s.pplQ().uncertainty()));
        sb.append(f("Mean PPL(base)                : %10.6f ± %10.6f%n", s.pplBase().value(), s.pplBase().uncertainty()));
        sb.append(f("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%%n", 100 * s.corLnPpl()));
        sb.append(f("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f%n", s.lnPplRatio().value(), s.lnPplRatio().uncertainty()));
        sb.append(f("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f%n", s.pplRatio().value(), s.pplRatio().uncertainty()));
        sb.append(f("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f%n", s.pplDiff().value(), s.pplDiff().uncertainty()));
        sb.append("\n====== KL divergence statistics ======\n");
        sb.append(f("Mean    KLD: %10.6f ± %10.6f%n", s.meanKld().value(), s.meanKld().uncertainty()));
        for (KlDivergence.Percentile p : s.kldPercentiles()) {
            sb.append(f("%-7s KLD: %10.6f%n", label(p.label()), p.value()));
        }
        sb.append("\n====== Token probability statistics ======\n");
        sb.append(f("Mean    Δp: %6.3f ± %5.3f %%%n", 100 * s.meanDeltaP().value(), 100 * s.meanDeltaP().uncertainty()));
        for (KlDivergence.Percentile p : s.deltaPPercentiles()) {
            sb.append(f("%-7s Δp: %6.3f%%%n", label(p.label()), 100 * p.value()));
        }
        sb.append(f("RMS Δp    : %6.3f ± %5.3f %%%n", 100 * s.rmsDeltaP().value(), 100 * s.rmsDeltaP().uncertainty()));
        sb.append(f("Same top p: %6.3f ± %5.3f %%%n", 100 * s.sameTop().value(), 100 * s.sameTop().uncertainty()));
        return sb.toString();
    }

    /**
     * The summary figures keyed by llama-perplexity's labels (as its lines read, spaces inside kept), in its units
     * (percent for Cor, Δp and Same top p): {value, uncertainty or NaN}.
     */
    public static Map<String, double[]> kldSummary(KlDivergence.Statistics s) {
        Map<String, double[]> m = new LinkedHashMap<>();
        m.put("Mean PPL(Q)", e(s.pplQ(), 1));
        m.put("Mean PPL(base)", e(s.pplBase(), 1));
        m.put("Cor(ln(PPL(Q)), ln(PPL(base)))", new double[] {100 * s.corLnPpl(), Double.NaN});
        m.put("Mean ln(PPL(Q)/PPL(base))", e(s.lnPplRatio(), 1));
        m.put("Mean PPL(Q)/PPL(base)", e(s.pplRatio(), 1));
        m.put("Mean PPL(Q)-PPL(base)", e(s.pplDiff(), 1));
        m.put("Mean    KLD", e(s.meanKld(), 1));
        for (KlDivergence.Percentile p : s.kldPercentiles()) {
            m.put(f("%-7s KLD", label(p.label())).strip(), new double[] {p.value(), Double.NaN});
        }
        m.put("Mean    Δp", e(s.meanDeltaP(), 100));
        for (KlDivergence.Percentile p : s.deltaPPercentiles()) {
            m.put(f("%-7s Δp", label(p.label())).strip(), new double[] {100 * p.value(), Double.NaN});
        }
        m.put("RMS Δp", e(s.rmsDeltaP(), 100));
        m.put("Same top p", e(s.sameTop(), 100));
        return m;
    }

    /** llama.cpp right-aligns the one-digit percentiles (" 5.0%"). */
    private static String label(String l) {
        return l.length() == 4 && l.endsWith("%") ? " " + l : l;
    }

    private static double[] e(KlDivergence.Estimate e, double unit) {
        return new double[] {unit * e.value(), unit * e.uncertainty()};
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
