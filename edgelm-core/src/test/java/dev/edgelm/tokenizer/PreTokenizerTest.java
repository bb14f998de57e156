package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The hand-written Qwen splitter against java.util.regex running the translated patterns (two independent
 * implementations of the same regex), and the regex path against Hugging Face's ids.
 */
class PreTokenizerTest {
    private static final int[] ALPHABET = {
        'a', 'Z', 'k', '0', '7', ' ', ' ', '\t', '\n', '\r', '\'', 's', 'S', 'l', 'L', 'e', 'r', 'v', 'm', 'd', 't', '!',
        '.', '(', '"', 0xA0, 0x3000, 0x2028, 0x85, 0x0301, 0x0308, 0x0915, 0x094D, 0x4E2D, 0x1F600, 0x1F3FD, 0x200D,
        0x0663, 0x2460, 0x017F, 0x212A, 0x1D400, 0xFE0F, '_', '-', '#',
    };

    @Test
    void qwenSplittersMatchTheRegexOnRandomText() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (boolean qwen35 : new boolean[] {false, true}) {
            PreTokenizer fast = new QwenSplitter(qwen35);
            PreTokenizer regex = new PreTokenizer.RegexSplitter(
                    PreTokenizer.translate(qwen35 ? PreTokenizer.QWEN35_PATTERN : PreTokenizer.QWEN2_PATTERN));
            for (int n = 0; n < 3000; n++) {
                StringBuilder sb = new StringBuilder();
                int len = rnd.nextInt(1, 24);
                for (int i = 0; i < len; i++) {
                    sb.appendCodePoint(ALPHABET[rnd.nextInt(ALPHABET.length)]);
                }
                String s = sb.toString();
                assertEquals(words(regex, s), words(fast, s), (qwen35 ? "qwen35" : "qwen2") + " on " + escape(s));
            }
        }
    }

    @Test
    void qwenSplittersMatchTheRegexOnTheReferenceCorpus() {
        JsonNode ref = TestTokenizers.json("tokenizers/qwen3/reference-cases.json");
        for (boolean qwen35 : new boolean[] {false, true}) {
            PreTokenizer fast = PreTokenizer.named(qwen35 ? "qwen35" : "qwen2");
            PreTokenizer regex = new PreTokenizer.RegexSplitter(
                    PreTokenizer.translate(qwen35 ? PreTokenizer.QWEN35_PATTERN : PreTokenizer.QWEN2_PATTERN));
            for (JsonNode c : ref.get("cases")) {
                String s = Normalizer.normalize(Tokenizer.replaceLoneSurrogates(c.get("text").asText()), Normalizer.Form.NFC);
                assertEquals(words(regex, s), words(fast, s), escape(s));
            }
        }
    }

    @Test
    void qwen35KeepsCombiningMarksInWords() {
        // hand-derived from the two patterns: Qwen2's words are letters only, so a virama (a mark) starts a new
        // word and a mark after punctuation joins the punctuation run; Qwen3.5 keeps marks with the letters
        PreTokenizer qwen2 = PreTokenizer.named("qwen2");
        PreTokenizer qwen35 = PreTokenizer.named("qwen35");
        assertEquals(List.of("\u0915", "\u094D\u0937"), words(qwen2, "\u0915\u094D\u0937"));
        assertEquals(List.of("\u0915\u094D\u0937"), words(qwen35, "\u0915\u094D\u0937"));
        assertEquals(List.of("a", ".\u0301", "b"), words(qwen2, "a.\u0301b"));
        assertEquals(List.of("a", ".\u0301b"), words(qwen35, "a.\u0301b"));
        // white space up to the last newline of a run, then the rest of the run at the end of the text
        assertEquals(List.of("x", "  \n", "  "), words(qwen2, "x  \n  "));
        // a run before a word leaves its last space to the word
        assertEquals(List.of("x", "  ", " y"), words(qwen2, "x   y"));
    }

    private static List<String> words(PreTokenizer p, String s) {
        List<String> out = new ArrayList<>();
        p.split(s, (a, b) -> out.add(s.substring(a, b)));
        return out;
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().forEach(cp -> sb.append(cp < 0x7F && cp >= 0x20 ? String.valueOf((char) cp) : String.format("\\u{%x}", cp)));
        return sb.toString();
    }
}
