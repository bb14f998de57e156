package dev.edgelm.engine;

import java.util.List;

/**
 * Finds stop strings in streamed text. {@link #push} returns the text that can safely be shown: text is
 * held back while it might still be the beginning of a stop string and released as soon as it cannot be.
 * When a stop string appears, the text before it is released, the stop string and anything after it are
 * dropped, and {@link #matched()} tells which one it was (the one that starts first; the longest on a tie).
 */
public final class StopStringMatcher {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private String matched;

    public StopStringMatcher(List<String> stops) {
        for (String s : stops) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("stop strings must not be empty");
            }
        }
        this.stops = List.copyOf(stops);
    }

    /** Adds text; returns what may be emitted now (possibly empty). Nothing is accepted after a match. */
    public String push(String text) {
        if (matched != null) {
            throw new IllegalStateException("a stop string has already matched");
        }
        held.append(text);
        int at = -1;
        for (String s : stops) {
            int i = held.indexOf(s);
            if (i >= 0 && (at < 0 || i < at || (i == at && s.length() > matched.length()))) {
                at = i;
                matched = s;
            }
        }
        if (at >= 0) {
            String out = held.substring(0, at);
            held.setLength(0);
            return out;
        }
        int keep = longestSuffixThatStartsAStop();
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** The stop string found, or null. */
    public String matched() {
        return matched;
    }

    /** Releases what is still held (the text ended without completing a stop string). */
    public String flush() {
        String out = held.toString();
        held.setLength(0);
        return out;
    }

    /** Length of the longest suffix of the held text that is a proper prefix of some stop string. */
    private int longestSuffixThatStartsAStop() {
        int best = 0;
        int len = held.length();
        for (String s : stops) {
            for (int n = Math.min(len, s.length() - 1); n > best; n--) {
                if (endsWith(len - n, s, n)) {
                    best = n;
                    break;
                }
            }
        }
        return best;
    }

    private boolean endsWith(int from, String s, int n) {
        for (int i = 0; i < n; i++) {
            if (held.charAt(from + i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
