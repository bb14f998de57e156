package dev.edgelm.cli;

import dev.edgelm.eval.Progress;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The eval commands' progress line on a terminal (stderr): a bar, done / total and the time left. The one place
 * the eval commands draw progress, so it can move onto a shared progress component without touching them.
 */
final class EvalProgress implements Progress {
    private static final int WIDTH = 30;
    private final PrintStream out;
    private final long start = System.nanoTime();
    private int lastLength;

    private EvalProgress(PrintStream out) {
        this.out = out;
    }

    /** A bar on stderr when the process runs on a terminal, nothing otherwise (pipes, tests). */
    static Progress of(ProcessContext context) {
        return context.stdoutIsTerminal() ? new EvalProgress(System.err) : Progress.NONE;
    }

    @Override
    public synchronized void update(long done, long total, String label) {
        long t = Math.max(1, total);
        int filled = (int) (WIDTH * Math.min(done, t) / t);
        double elapsed = (System.nanoTime() - start) / 1e9;
        String eta = done == 0 ? "--:--" : clock(elapsed * (t - done) / done);
        String line = String.format(Locale.ROOT, "[%s%s] %d/%d %s  ETA %s", "#".repeat(filled), ".".repeat(WIDTH - filled), done,
                total, label, eta);
        out.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        lastLength = line.length();
        if (done >= total) {
            out.println();
            lastLength = 0;
        }
        out.flush();
    }

    private static String clock(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
    }
}
