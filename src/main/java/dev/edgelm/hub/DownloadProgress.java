package dev.edgelm.hub;

import java.io.PrintStream;
import java.util.Locale;

/** A one-line progress bar on a terminal stream: name, bytes done / total, rate. Redrawn at most 10 times a second. */
final class DownloadProgress {
    private static final long REDRAW_NANOS = 100_000_000L;
    private static final int BAR_WIDTH = 24;

    private final PrintStream out;
    private final String name;
    private final long total;
    private final long startBytes;
    private final long startNanos = System.nanoTime();
    private long lastDraw;
    private long done;

    DownloadProgress(PrintStream out, String name, long total, long alreadyDone) {
        this.out = out;
        this.name = name;
        this.total = total;
        this.startBytes = alreadyDone;
        this.done = alreadyDone;
        draw();
    }

    void advance(long bytes) {
        done += bytes;
        long now = System.nanoTime();
        if (now - lastDraw >= REDRAW_NANOS) {
            draw();
        }
    }

    void finish() {
        if (out != null) {
            draw();
            out.println();
            out.flush();
        }
    }

    private void draw() {
        lastDraw = System.nanoTime();
        if (out == null) {
            return;
        }
        double seconds = Math.max(1e-9, (lastDraw - startNanos) / 1e9);
        double rate = (done - startBytes) / seconds;
        StringBuilder line = new StringBuilder("\r").append(name).append(' ');
        if (total > 0) {
            int filled = (int) Math.min(BAR_WIDTH, BAR_WIDTH * done / total);
            line.append('[').append("#".repeat(filled)).append(" ".repeat(BAR_WIDTH - filled)).append("] ")
                    .append(mib(done)).append(" / ").append(mib(total)).append(" MB");
        } else {
            line.append(mib(done)).append(" MB");
        }
        line.append("  ").append(mib((long) rate)).append(" MB/s");
        out.print(line);
        out.flush();
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / (1024.0 * 1024.0));
    }
}
