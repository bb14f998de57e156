package dev.edgelm.cli;

import dev.edgelm.convert.RowStreamWriter;
import java.io.PrintStream;

/** A one-line progress bar redrawn in place on a stream (stderr): bytes done / total and the current tensor. */
final class ProgressBar implements RowStreamWriter.Progress {
    private static final int WIDTH = 30;
    private final PrintStream out;
    private int lastLength;

    ProgressBar(PrintStream out) {
        this.out = out;
    }

    @Override
    public void update(String tensor, long bytesDone, long bytesTotal) {
        int filled = (int) (WIDTH * bytesDone / Math.max(1, bytesTotal));
        String line = String.format("[%s%s] %3d%%  %s / %s  %s", "#".repeat(filled), ".".repeat(WIDTH - filled),
                100 * bytesDone / Math.max(1, bytesTotal), Sizes.bytes(bytesDone), Sizes.bytes(bytesTotal), tensor);
        out.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        lastLength = line.length();
        out.flush();
    }

    /** Ends the line so that later output starts on a fresh one. */
    void done() {
        if (lastLength > 0) {
            out.println();
        }
    }
}
