package dev.edgelm.tokenizer;

import java.util.Arrays;

/**
 * Turns a stream of token ids into text piece by piece. Bytes that start a UTF-8 character but do not finish it
 * yet are held back until a later token completes it; bytes that cannot become valid UTF-8 come out as U+FFFD
 * right away, and {@link #finish} flushes what is still held. The pieces add up to exactly
 * {@link Tokenizer#decode} of all the ids. Not thread-safe: one per stream.
 */
public final class IncrementalDecoder {
    private final Tokenizer tokenizer;
    private final boolean skipSpecial;
    private byte[] pending = new byte[16];
    private int pendingLength;

    IncrementalDecoder(Tokenizer tokenizer, boolean skipSpecial) {
        this.tokenizer = tokenizer;
        this.skipSpecial = skipSpecial;
    }

    /** Adds one token; returns the text that is now complete (often the token's text, possibly empty). */
    public String accept(int id) {
        if (skipSpecial && tokenizer.isSpecial(id)) {
            return "";
        }
        byte[] b = tokenizer.rawBytes(id);
        if (pendingLength + b.length > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + b.length));
        }
        System.arraycopy(b, 0, pending, pendingLength, b.length);
        pendingLength += b.length;
        int ready = pendingLength - Utf8.incompleteTail(pending, pendingLength);
        String text = Utf8.decode(pending, 0, ready);
        System.arraycopy(pending, ready, pending, 0, pendingLength - ready);
        pendingLength -= ready;
        return text;
    }

    /** Ends the stream: the bytes still held (an unfinished character) come out as U+FFFD. */
    public String finish() {
        String text = Utf8.decode(pending, 0, pendingLength);
        pendingLength = 0;
        return text;
    }
}
