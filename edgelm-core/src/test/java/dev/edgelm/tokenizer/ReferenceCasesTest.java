package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Encoding and decoding against Hugging Face's own tokenizers library (expected values written by
 * tools/tokenizer-reference from the same tokenizer.json files).
 */
class ReferenceCasesTest {

    @TestFactory
    Stream<DynamicTest> qwen3() {
        return cases("qwen3", TestTokenizers::qwen3, "tokenizers/qwen3/reference-cases.json");
    }

    @TestFactory
    Stream<DynamicTest> tinyChat() {
        return cases("tiny-chat", TestTokenizers::tinyChat, "tokenizers/tiny-chat-reference-cases.json");
    }

    private static Stream<DynamicTest> cases(String name, Supplier<Tokenizer> tokenizer, String resource) {
        JsonNode ref = TestTokenizers.json(resource);
        List<DynamicTest> tests = new ArrayList<>();
        int i = 0;
        for (JsonNode c : ref.get("cases")) {
            String text = c.get("text").asText();
            String label = name + " #" + i++ + " " + shorten(text);
            tests.add(DynamicTest.dynamicTest(label, () -> {
                Tokenizer tok = tokenizer.get();
                int[] expected = TestTokenizers.ids(c.get("ids"));
                int[] ids = tok.encode(text);
                assertArrayEquals(expected, ids, "encode " + label);
                int[] expectedSplit = c.has("ids_split_special") ? TestTokenizers.ids(c.get("ids_split_special")) : expected;
                assertArrayEquals(expectedSplit, tok.encode(text, true), "encode split-special " + label);
                String decoded = c.get("decoded").asText();
                assertEquals(decoded, tok.decode(ids, false), "decode " + label);
                String skipped = c.has("decoded_skip_special") ? c.get("decoded_skip_special").asText() : decoded;
                assertEquals(skipped, tok.decode(ids, true), "decode skipping special " + label);
                // round trip: decoding gives back the normalized text (lone surrogates read as U+FFFD)
                String nfc = Normalizer.normalize(Tokenizer.replaceLoneSurrogates(text), Normalizer.Form.NFC);
                assertEquals(nfc, tok.decode(ids, false), "round trip " + label);
                assertEquals(decoded, streamed(tok, ids), "incremental decode " + label);
            }));
        }
        for (JsonNode c : ref.get("decode_cases")) {
            int[] ids = TestTokenizers.ids(c.get("ids"));
            String label = name + " decode " + java.util.Arrays.toString(ids);
            tests.add(DynamicTest.dynamicTest(label, () -> {
                Tokenizer tok = tokenizer.get();
                assertEquals(c.get("text").asText(), tok.decode(ids, false), label);
                assertEquals(c.get("text_skip_special").asText(), tok.decode(ids, true), label);
                assertEquals(c.get("text").asText(), streamed(tok, ids), "incremental " + label);
            }));
        }
        return tests.stream();
    }

    static String streamed(Tokenizer tok, int[] ids) {
        IncrementalDecoder d = tok.newDecoder(false);
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            String piece = d.accept(id);
            if (!piece.isEmpty() && Character.isHighSurrogate(piece.charAt(piece.length() - 1))) {
                throw new AssertionError("a streamed piece ends inside a character: " + piece);
            }
            sb.append(piece);
        }
        return sb.append(d.finish()).toString();
    }

    private static String shorten(String s) {
        String t = s.length() > 24 ? s.substring(0, 24) + "...(" + s.length() + ")" : s;
        StringBuilder sb = new StringBuilder();
        t.codePoints().forEach(cp -> sb.append(cp < 0x20 || Character.isSurrogate((char) cp) && cp < 0x10000
                ? String.format("\\u%04x", cp) : new String(Character.toChars(cp))));
        return sb.toString();
    }
}
