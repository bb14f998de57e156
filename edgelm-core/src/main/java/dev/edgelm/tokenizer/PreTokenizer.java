package dev.edgelm.tokenizer;

import dev.edgelm.util.EdgeLmException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Splits normalized text into the words that BPE then encodes separately (Hugging Face's {@code Split}
 * pre-tokenizer with behaviour {@code Isolated}: every match is a word, and so is every gap between matches).
 */
public interface PreTokenizer {

    /** Receives the words of a text as [start, end) ranges, in order, together covering the whole text. */
    @FunctionalInterface
    interface WordSink {
        void word(int start, int end);
    }

    void split(String text, WordSink sink);

    /** The Qwen2 / Qwen2.5 / Qwen3 split pattern ({@code tokenizer.ggml.pre = qwen2}). */
    String QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
            + "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    /** The Qwen3.5 split pattern ({@code qwen35}): Qwen2's, with combining marks kept in words. */
    String QWEN35_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    /** GPT-2's pattern, what a {@code ByteLevel} pre-tokenizer with {@code use_regex: true} applies. */
    String GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    /**
     * A pre-tokenizer for a named kind ({@code qwen2}, {@code qwen35}, {@code gpt2}: the names GGUF files use in
     * {@code tokenizer.ggml.pre}).
     */
    static PreTokenizer named(String kind) {
        return switch (kind.toLowerCase(Locale.ROOT)) {
            case "qwen2" -> new QwenSplitter(false);
            case "qwen35" -> new QwenSplitter(true);
            case "gpt2" -> regex(GPT2_PATTERN);
            default -> throw new EdgeLmException("pre-tokenizer '" + kind + "' is not supported (known: qwen2, qwen35, gpt2)");
        };
    }

    /**
     * A pre-tokenizer for a Hugging Face {@code Split} regex. The Qwen patterns get a hand-written matcher (same
     * words, no backtracking); any other pattern runs on {@code java.util.regex}, see {@link #translate}.
     */
    static PreTokenizer regex(String pattern) {
        if (pattern.equals(QWEN2_PATTERN)) {
            return new QwenSplitter(false);
        }
        if (pattern.equals(QWEN35_PATTERN)) {
            return new QwenSplitter(true);
        }
        return new RegexSplitter(translate(pattern));
    }

    /**
     * Compiles a pattern written for the Rust {@code regex} / Oniguruma engines of Hugging Face tokenizers so
     * that {@code java.util.regex} matches the same: there {@code \s}, {@code \d}, {@code \w} are Unicode classes
     * and {@code (?i)} folds Unicode case, which here needs {@code UNICODE_CHARACTER_CLASS} (it implies Unicode
     * case folding too). The syntax these patterns use ({@code \p{L}}, {@code (?i:...)}, look-ahead) is the same.
     */
    static Pattern translate(String pattern) {
        try {
            return Pattern.compile(pattern, Pattern.UNICODE_CHARACTER_CLASS);
        } catch (PatternSyntaxException e) {
            throw new EdgeLmException("pre-tokenizer regex cannot be compiled: " + e.getDescription() + ": " + pattern);
        }
    }

    /** Applies several pre-tokenizers in turn, each to the words of the one before. */
    static PreTokenizer sequence(List<PreTokenizer> steps) {
        if (steps.size() == 1) {
            return steps.getFirst();
        }
        return (text, sink) -> splitFrom(steps, 0, text, 0, sink);
    }

    private static void splitFrom(List<PreTokenizer> steps, int step, String text, int offset, WordSink sink) {
        if (step == steps.size()) {
            sink.word(offset, offset + text.length());
            return;
        }
        steps.get(step).split(text, (s, e) -> splitFrom(steps, step + 1, text.substring(s, e), offset + s, sink));
    }

    /** {@code Split} with behaviour {@code Isolated} on a compiled regex. */
    record RegexSplitter(Pattern pattern) implements PreTokenizer {
        /**
         * Characters the regex engine may read per character of text. Real patterns read a few; a pattern that
         * backtracks catastrophically ({@code (a+)+$}, from a hostile tokenizer.json) reads exponentially many
         * and is stopped here instead of hanging the encoder.
         */
        static final long READS_PER_CHAR = 10_000;

        @Override
        public void split(String text, WordSink sink) {
            Matcher m = pattern.matcher(new BoundedText(text, READS_PER_CHAR * text.length() + 100_000));
            int last = 0;
            while (m.find()) {
                if (m.end() == m.start()) {
                    continue;
                }
                if (m.start() > last) {
                    sink.word(last, m.start());
                }
                sink.word(m.start(), m.end());
                last = m.end();
            }
            if (last < text.length()) {
                sink.word(last, text.length());
            }
        }
    }

    /** The text as the regex engine reads it, a character at a time, up to a budget of reads. */
    final class BoundedText implements CharSequence {
        private final String text;
        private final long budget;
        private long reads;

        BoundedText(String text, long budget) {
            this.text = text;
            this.budget = budget;
        }

        @Override
        public char charAt(int index) {
            if (++reads > budget) {
                throw new EdgeLmException("the tokenizer's pre-tokenizer regex backtracks without bound on a text of "
                        + text.length() + " characters (more than " + RegexSplitter.READS_PER_CHAR + " reads per character)");
            }
            return text.charAt(index);
        }

        @Override
        public int length() {
            return text.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return text.substring(start, end);
        }

        @Override
        public String toString() {
            return text;
        }
    }
}
