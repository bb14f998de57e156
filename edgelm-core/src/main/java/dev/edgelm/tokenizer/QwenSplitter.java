package dev.edgelm.tokenizer;

/**
 * The Qwen split patterns ({@link PreTokenizer#QWEN2_PATTERN}, {@link PreTokenizer#QWEN35_PATTERN}) as a direct
 * scan: at each position it takes the word the regex's first matching alternative would take, in one pass over
 * the characters (the regex engine's backtracking on long white-space runs is gone). {@code \s} is Unicode
 * White_Space, as in the Rust and Oniguruma engines.
 */
final class QwenSplitter implements PreTokenizer {
    private static final byte LETTER = 1;
    private static final byte NUMBER = 2;
    private static final byte MARK = 4;
    private static final byte SPACE = 8;
    private static final byte[] BMP = new byte[65536];

    static {
        for (int c = 0; c < 65536; c++) {
            BMP[c] = classify(c);
        }
    }

    /** Qwen3.5's variant: combining marks count as letters in words and are kept out of punctuation runs. */
    private final boolean marksInWords;

    QwenSplitter(boolean marksInWords) {
        this.marksInWords = marksInWords;
    }

    private static byte classify(int cp) {
        int type = Character.getType(cp);
        return switch (type) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER -> LETTER;
            case Character.DECIMAL_DIGIT_NUMBER, Character.LETTER_NUMBER, Character.OTHER_NUMBER -> NUMBER;
            case Character.NON_SPACING_MARK, Character.ENCLOSING_MARK, Character.COMBINING_SPACING_MARK -> MARK;
            default -> isWhiteSpace(cp) ? SPACE : 0;
        };
    }

    /** Unicode White_Space (what {@code \s} means in the Rust and Oniguruma engines). */
    private static boolean isWhiteSpace(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
                || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F
                || cp == 0x3000;
    }

    private static int classOf(int cp) {
        return cp < 65536 ? BMP[cp] : classify(cp);
    }

    private boolean inWord(int cls) {
        return (cls & LETTER) != 0 || (marksInWords && (cls & MARK) != 0);
    }

    private boolean inPunct(int cls) {
        return cls == 0 || (!marksInWords && cls == MARK);
    }

    @Override
    public void split(String s, WordSink sink) {
        int n = s.length();
        int i = 0;
        while (i < n) {
            int end = wordEnd(s, i, n);
            sink.word(i, end);
            i = end;
        }
    }

    private int wordEnd(String s, int i, int n) {
        int cp = s.codePointAt(i);
        int next = i + Character.charCount(cp);
        int cls = classOf(cp);
        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if (cp == '\'' && next < n) {
            int len = contraction(s, next, n);
            if (len > 0) {
                return next + len;
            }
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+   (Qwen3.5: [\p{L}\p{M}]+)
        if (inWord(cls)) {
            return wordRun(s, next, n);
        }
        boolean optionalPrefix = cp != '\r' && cp != '\n' && (cls & (LETTER | NUMBER)) == 0;
        if (optionalPrefix && next < n && inWord(classOf(s.codePointAt(next)))) {
            return wordRun(s, next, n);
        }
        // \p{N}
        if ((cls & NUMBER) != 0) {
            return next;
        }
        //  ?[^\s\p{L}\p{N}]+[\r\n]*   (Qwen3.5: also not \p{M})
        if (cp == ' ' && next < n && inPunct(classOf(s.codePointAt(next)))) {
            return newlines(s, punctRun(s, next, n), n);
        }
        if (inPunct(cls)) {
            return newlines(s, punctRun(s, i, n), n);
        }
        // white space: \s*[\r\n]+ | \s+(?!\S) | \s+
        int runEnd = i;
        int lastNewline = -1;
        while (runEnd < n) {
            char c = s.charAt(runEnd);
            if (BMP[c] != SPACE) {
                break;
            }
            if (c == '\r' || c == '\n') {
                lastNewline = runEnd;
            }
            runEnd++;
        }
        if (lastNewline >= 0) {
            return lastNewline + 1;
        }
        if (runEnd == n || runEnd - i == 1) {
            return runEnd;
        }
        return runEnd - 1;
    }

    /** Length of a contraction suffix starting at {@code j} (just after the apostrophe), or 0. */
    private static int contraction(String s, int j, int n) {
        char a = s.charAt(j);
        if (folds(a, 's') || folds(a, 't') || folds(a, 'm') || folds(a, 'd')) {
            return 1;
        }
        if (j + 1 < n) {
            char b = s.charAt(j + 1);
            if ((folds(a, 'r') && folds(b, 'e')) || (folds(a, 'v') && folds(b, 'e')) || (folds(a, 'l') && folds(b, 'l'))) {
                return 2;
            }
        }
        return 0;
    }

    /** Whether {@code c} matches lower-case ASCII letter {@code lower} case-insensitively (Unicode folding: ſ is s). */
    private static boolean folds(char c, char lower) {
        return c == lower || c == lower - 32 || (c > 127 && Character.toLowerCase(Character.toUpperCase(c)) == lower);
    }

    private int wordRun(String s, int j, int n) {
        while (j < n) {
            int cp = s.codePointAt(j);
            if (!inWord(classOf(cp))) {
                break;
            }
            j += Character.charCount(cp);
        }
        return j;
    }

    private int punctRun(String s, int j, int n) {
        while (j < n) {
            int cp = s.codePointAt(j);
            if (!inPunct(classOf(cp))) {
                break;
            }
            j += Character.charCount(cp);
        }
        return j;
    }

    private static int newlines(String s, int j, int n) {
        while (j < n && (s.charAt(j) == '\r' || s.charAt(j) == '\n')) {
            j++;
        }
        return j;
    }
}
