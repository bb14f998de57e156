package dev.edgelm.cli;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import org.jline.reader.impl.LineReaderImpl;
import org.jline.terminal.Terminal;

/**
 * JLine's line reader, redrawing the line only when no more keys are waiting. JLine redraws the whole buffer after
 * every key, which costs time proportional to the line: a pasted line arrives as thousands of keys where the terminal
 * has no bracketed paste, so a 48 KB paste took minutes and 150 KB never finished. Skipping the redraws while input
 * is pending keeps a paste linear; the line is drawn once the keys stop.
 */
final class ChatLineReader extends LineReaderImpl {
    /** How long to look for a next key before redrawing: far below what a person notices. */
    private static final long PENDING_MS = 3;
    private final AtomicLong redraws = new AtomicLong();

    ChatLineReader(Terminal terminal, String appName) throws IOException {
        super(terminal, appName);
    }

    @Override
    protected void redisplay(boolean flush) {
        try {
            if (isReading() && getTerminal().reader().peek(PENDING_MS) >= 0) {
                return; // more keys are waiting: they redraw when they are done
            }
        } catch (IOException e) {
            // the terminal is going away: draw as usual
        }
        redraws.incrementAndGet();
        super.redisplay(flush);
    }

    /** Redraws done so far (tests check that a paste does not redraw per key). */
    long redraws() {
        return redraws.get();
    }
}
