package dev.edgelm.util;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The one progress bar of EdgeLM (downloads, conversions, synthetic models, evaluations): on a terminal a line
 * redrawn in place at most ten times a second and fitted to the terminal's width, with the share done, the
 * amount done and the total, the rate and the time left; elsewhere (a log file, a pipe, CI) a few plain lines,
 * one per quarter, and a last one with the total time.
 *
 * <p>Written here rather than taken from a library (such as {@code me.tongfei:progressbar}): that one redraws
 * from a timer thread of its own and, on a non-terminal, still writes a line per redraw; this one is driven by
 * the caller's own updates (no thread, so tests see exactly what is printed), prints the quarter lines
 * on a non-terminal, and counts bytes in binary units (MiB) like the sizes the rest of EdgeLM prints.
 */
public final class ProgressBar implements AutoCloseable {
    private static final long REDRAW_NANOS = 100_000_000L;
    private static final int QUARTERS = 4;

    private final PrintStream out;
    private final String label;
    private final long total;
    private final String noun;
    private final boolean terminal;
    private final int width;
    private final LongSupplier clock;
    private final long startNanos;
    private final long startDone;
    private long done;
    private long lastDraw = Long.MIN_VALUE;
    private int quartersPrinted;
    private int lastLength;
    private boolean closed;

    /**
     * @param out      where it is drawn (normally standard error), or null for silence
     * @param label    what is under way, e.g. a file name
     * @param total    the amount when done, or 0 or less when unknown
     * @param done     what was done before this bar started (a resumed download), not counted in the rate
     * @param noun     the unit: null for bytes, else a plural noun for counted items ("questions")
     * @param terminal whether {@code out} is a terminal (redraw in place) or not (plain lines)
     * @param width    the terminal's columns
     * @param clock    nanoseconds, as {@link System#nanoTime()}
     */
    public ProgressBar(PrintStream out, String label, long total, long done, String noun, boolean terminal, int width,
                       LongSupplier clock) {
        this.out = out;
        this.label = label;
        this.total = total;
        this.noun = noun;
        this.terminal = terminal;
        this.width = Math.max(20, width);
        this.clock = clock;
        this.startNanos = clock.getAsLong();
        this.startDone = done;
        this.done = done;
        if (total > 0) {
            quartersPrinted = (int) (QUARTERS * done / total);
        }
        if (terminal) {
            draw(startNanos);
        }
    }

    /** A bar for bytes on standard error (or on {@code out}, then not taken for a terminal). */
    public static ProgressBar bytes(PrintStream out, String label, long total, long alreadyDone) {
        boolean tty = out != null && out == System.err && Console.stderrIsTerminal(System.getenv());
        return new ProgressBar(out, label, total, alreadyDone, null, tty, Console.width(System.getenv()), System::nanoTime);
    }

    /** A bar for counted items ({@code noun}: "questions", "tokens") on standard error (or on {@code out}). */
    public static ProgressBar items(PrintStream out, String label, long total, String noun) {
        boolean tty = out != null && out == System.err && Console.stderrIsTerminal(System.getenv());
        return new ProgressBar(out, label, total, 0, noun, tty, Console.width(System.getenv()), System::nanoTime);
    }

    /** Adds {@code n} to the amount done. */
    public void advance(long n) {
        set(done + n);
    }

    /** Sets the amount done. */
    public void set(long amount) {
        done = amount;
        if (out == null || closed) {
            return;
        }
        long now = clock.getAsLong();
        if (terminal) {
            if (now - lastDraw >= REDRAW_NANOS) {
                draw(now);
            }
        } else if (total > 0) {
            int quarter = (int) Math.min(QUARTERS - 1, QUARTERS * done / total);
            if (quarter > quartersPrinted) {
                quartersPrinted = quarter;
                out.println(label + ": " + percent() + " (" + amounts() + rateAndEta(now) + ")");
                out.flush();
            }
        }
    }

    /** Ends the bar: on a terminal the line is drawn once more and ended; elsewhere a last line with the total time. */
    @Override
    public void close() {
        if (out == null || closed) {
            return;
        }
        closed = true;
        long now = clock.getAsLong();
        if (terminal) {
            draw(now);
            out.println();
        } else {
            double seconds = (now - startNanos) / 1e9;
            out.println(label + ": done, " + amount(done) + (noun == null ? "" : " " + noun) + " in "
                    + duration(seconds) + rate(now));
        }
        out.flush();
    }

    private void draw(long now) {
        lastDraw = now;
        if (out == null) {
            return;
        }
        String tail = " " + (total > 0 ? percent() + " " : "") + amounts() + rateAndEta(now);
        String line;
        int room = width - 1 - label.length() - tail.length() - 3; // "[", "]", a space
        if (total > 0 && room >= 10) {
            int barWidth = Math.min(40, room);
            int filled = (int) Math.min(barWidth, barWidth * done / total);
            line = label + " [" + "#".repeat(filled) + ".".repeat(barWidth - filled) + "]" + tail;
        } else {
            line = label + tail;
        }
        if (line.length() > width - 1) { // too narrow: keep the figures, shorten the label
            int keep = Math.max(0, width - 1 - tail.length() - 1);
            line = (label.length() > keep ? label.substring(0, Math.max(0, keep - 1)) + "~" : label) + tail;
            if (line.length() > width - 1) {
                line = line.substring(0, width - 1);
            }
        }
        out.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        lastLength = line.length();
        out.flush();
    }

    private String percent() {
        return String.format(Locale.ROOT, "%3d%%", (int) Math.min(100, 100 * done / Math.max(1, total)));
    }

    private String amounts() {
        if (noun != null) {
            return done + (total > 0 ? "/" + total : "") + " " + noun;
        }
        return total > 0 ? Bytes.format(done) + " of " + Bytes.format(total) : Bytes.format(done);
    }

    private String amount(long n) {
        return noun == null ? Bytes.format(n) : Long.toString(n);
    }

    private String rateAndEta(long now) {
        double seconds = (now - startNanos) / 1e9;
        double perSecond = seconds > 0 ? (done - startDone) / seconds : 0;
        if (perSecond <= 0) {
            return "";
        }
        String r = rate(now);
        if (total > 0 && done < total) {
            r += ", " + duration((total - done) / perSecond) + " left";
        }
        return r;
    }

    private String rate(long now) {
        double seconds = (now - startNanos) / 1e9;
        if (seconds <= 0 || done <= startDone) {
            return "";
        }
        double perSecond = (done - startDone) / seconds;
        return noun == null ? ", " + Bytes.format((long) perSecond) + "/s"
                : String.format(Locale.ROOT, ", %.1f %s/s", perSecond, noun);
    }

    /** {@code 75} -> {@code "1:15"}, {@code 3725} -> {@code "1:02:05"}, under 10 s with a decimal. */
    static String duration(double seconds) {
        if (seconds < 10) {
            return String.format(Locale.ROOT, "%.1f s", seconds);
        }
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
