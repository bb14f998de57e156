package dev.edgelm.chat;

/**
 * Splits streamed reply text at {@code <think>} and {@code </think>} into thinking and answer. A tag may arrive
 * in pieces: text that could still be the start of the next tag is held back. Newlines right inside a think
 * block and right after it are dropped, as the chat template drops them when it re-renders a reply.
 */
public final class ThinkingSplitter {
    public static final String OPEN = "<think>";
    public static final String CLOSE = "</think>";

    private final ChatListener listener;
    private final StringBuilder thinking = new StringBuilder();
    private final StringBuilder answer = new StringBuilder();
    private final StringBuilder held = new StringBuilder();
    private boolean inThinking;
    private boolean sawThinking;
    /** Nothing but newlines emitted since the block started: leading newlines are dropped. */
    private boolean atBlockStart = true;
    /** Newlines at the end of the text so far, kept back until more text follows in the same block. */
    private int trailingNewlines;

    /** {@code startsThinking}: the prompt ends inside an open think block. */
    public ThinkingSplitter(boolean startsThinking, ChatListener listener) {
        this.listener = listener;
        this.inThinking = startsThinking;
        this.sawThinking = startsThinking;
    }

    public void push(String piece) {
        held.append(piece);
        while (true) {
            String tag = inThinking ? CLOSE : OPEN;
            int at = held.indexOf(tag);
            if (at < 0) {
                break;
            }
            emit(held.substring(0, at));
            held.delete(0, at + tag.length());
            inThinking = !inThinking;
            sawThinking |= inThinking;
            atBlockStart = true;
            trailingNewlines = 0;
        }
        int keep = partialTagLength(held, inThinking ? CLOSE : OPEN);
        emit(held.substring(0, held.length() - keep));
        held.delete(0, held.length() - keep);
    }

    /** Releases text held back as a possible tag start; trailing newlines are dropped. */
    public void finish() {
        emit(held.toString());
        held.setLength(0);
    }

    public String thinking() {
        return thinking.toString();
    }

    public String answer() {
        return answer.toString();
    }

    /** Whether the reply had a thinking part (the prompt opened one, or the model wrote {@code <think>}). */
    public boolean sawThinking() {
        return sawThinking;
    }

    private void emit(String text) {
        int start = 0;
        int end = text.length();
        if (atBlockStart) {
            while (start < end && text.charAt(start) == '\n') {
                start++;
            }
        }
        if (start == end) {
            return;
        }
        int trailing = 0;
        while (trailing < end - start && text.charAt(end - 1 - trailing) == '\n') {
            trailing++;
        }
        if (trailing == end - start) {
            trailingNewlines += trailing;
            return;
        }
        String out = "\n".repeat(trailingNewlines) + text.substring(start, end - trailing);
        trailingNewlines = trailing;
        atBlockStart = false;
        if (inThinking) {
            thinking.append(out);
            listener.onThinking(out);
        } else {
            answer.append(out);
            listener.onAnswer(out);
        }
    }

    /** Length of the longest end of {@code text} that is a proper start of {@code tag}. */
    private static int partialTagLength(CharSequence text, String tag) {
        for (int n = Math.min(tag.length() - 1, text.length()); n > 0; n--) {
            boolean match = true;
            for (int i = 0; i < n && match; i++) {
                match = text.charAt(text.length() - n + i) == tag.charAt(i);
            }
            if (match) {
                return n;
            }
        }
        return 0;
    }
}
