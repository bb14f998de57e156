package dev.edgelm.tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds added tokens in a text the way Hugging Face's added vocabulary does: leftmost-longest, non-overlapping
 * matches over all added tokens; with split-special a special token's match is kept as plain text.
 */
final class AddedTokenMatcher {
    /** A piece of the text: an added token ({@code token != null}) or a stretch of plain text. */
    record Piece(int start, int end, AddedToken token) {}

    private final Map<Character, AddedToken[]> byFirstChar = new HashMap<>();

    AddedTokenMatcher(List<AddedToken> tokens) {
        Map<Character, List<AddedToken>> groups = new HashMap<>();
        for (AddedToken t : tokens) {
            groups.computeIfAbsent(t.content().charAt(0), k -> new ArrayList<>()).add(t);
        }
        groups.forEach((c, list) -> {
            AddedToken[] arr = list.toArray(AddedToken[]::new);
            Arrays.sort(arr, Comparator.comparingInt((AddedToken t) -> t.content().length()).reversed());
            byFirstChar.put(c, arr);
        });
    }

    boolean isEmpty() {
        return byFirstChar.isEmpty();
    }

    /** Splits {@code text} into plain stretches and added tokens, in order; empty stretches are left out. */
    List<Piece> split(String text, boolean splitSpecial) {
        return split(text, splitSpecial ? (start, end) -> true : null);
    }

    /** Where special tokens count as plain text: true for a match over {@code [start, end)} that must not be one. */
    @FunctionalInterface
    interface PlainSpans {
        boolean covers(int start, int end);
    }

    /**
     * As {@link #split(String, boolean)}, with special tokens kept as plain text where {@code plain} says so
     * (null: nowhere).
     */
    List<Piece> split(String text, PlainSpans plain) {
        List<Piece> out = new ArrayList<>();
        int plainStart = 0;
        int i = 0;
        int n = text.length();
        while (i < n) {
            AddedToken[] candidates = byFirstChar.get(text.charAt(i));
            AddedToken match = null;
            if (candidates != null) {
                for (AddedToken t : candidates) {
                    if (text.startsWith(t.content(), i)) {
                        match = t;
                        break;
                    }
                }
            }
            if (match == null) {
                i++;
                continue;
            }
            int start = i;
            int stop = i + match.content().length();
            i = stop;
            if (plain != null && match.special() && plain.covers(start, stop)) {
                continue;
            }
            if (match.singleWord() && (endsWithWord(text, start) || startsWithWord(text, stop))) {
                continue;
            }
            if (match.lstrip()) {
                while (start > plainStart && Character.isWhitespace(text.charAt(start - 1))) {
                    start--;
                }
            }
            if (match.rstrip()) {
                while (stop < n && Character.isWhitespace(text.charAt(stop))) {
                    stop++;
                }
                i = stop;
            }
            if (start > plainStart) {
                out.add(new Piece(plainStart, start, null));
            }
            out.add(new Piece(start, stop, match));
            plainStart = stop;
        }
        if (plainStart < n) {
            out.add(new Piece(plainStart, n, null));
        }
        return out;
    }

    private static boolean endsWithWord(String text, int end) {
        return end > 0 && Character.isLetterOrDigit(text.codePointBefore(end));
    }

    private static boolean startsWithWord(String text, int start) {
        return start < text.length() && Character.isLetterOrDigit(text.codePointAt(start));
    }
}
