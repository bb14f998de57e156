package dev.edgelm.cli;

import dev.edgelm.convert.RowStreamWriter;
import java.io.PrintStream;

/**
 * A conversion's progress (bytes of tensors written) on EdgeLM's {@link dev.edgelm.util.ProgressBar}; the bar
 * starts with the first update, when the total is known.
 */
final class ProgressBar implements RowStreamWriter.Progress {
    private final PrintStream out;
    private final String label;
    private dev.edgelm.util.ProgressBar bar;

    ProgressBar(PrintStream out) {
        this(out, "writing");
    }

    ProgressBar(PrintStream out, String label) {
        this.out = out;
        this.label = label;
    }

    @Override
    public void update(String tensor, long bytesDone, long bytesTotal) {
        if (bar == null) {
            bar = dev.edgelm.util.ProgressBar.bytes(out, label, bytesTotal, 0);
        }
        bar.set(bytesDone);
    }

    /** Ends the bar so that later output starts on a fresh line. */
    void done() {
        if (bar != null) {
            bar.close();
        }
    }
}
