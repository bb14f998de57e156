package dev.edgelm.hub;

import dev.edgelm.util.ProgressBar;
import java.io.PrintStream;

/** The progress of one file's download: EdgeLM's {@link ProgressBar} in bytes (nothing when {@code out} is null). */
final class DownloadProgress {
    private final ProgressBar bar;

    DownloadProgress(PrintStream out, String name, long total, long alreadyDone) {
        this.bar = ProgressBar.bytes(out, name, total, alreadyDone);
    }

    void advance(long bytes) {
        bar.advance(bytes);
    }

    void finish() {
        bar.close();
    }
}
