package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * llama.cpp's tokenizer test cases for the Qwen2 vocabulary (models/ggml-vocab-qwen2.gguf.inp / .out): texts
 * separated by {@code __ggml_vocab_test__} lines, one line of expected ids per text, nothing added.
 */
class PeerCasesTest {

    @Test
    void qwen2VocabularyCases() throws IOException {
        String inp = read("tokenizers/peer-cases/ggml-vocab-qwen2.gguf.inp");
        String out = read("tokenizers/peer-cases/ggml-vocab-qwen2.gguf.out");
        String[] texts = inp.split("\n__ggml_vocab_test__\n", -1);
        texts = Arrays.copyOf(texts, texts.length - 1); // the file ends with a separator
        String[] lines = out.split("\n", -1);
        assertEquals(46, texts.length);
        Tokenizer tok = TestTokenizers.qwen3();
        for (int i = 0; i < texts.length; i++) {
            String line = lines[i].trim();
            int[] expected = line.isEmpty() ? new int[0] : Arrays.stream(line.split(" +")).mapToInt(Integer::parseInt).toArray();
            assertArrayEquals(expected, tok.encode(texts[i]), "case " + i + ": " + texts[i]);
        }
    }

    private static String read(String name) throws IOException {
        try (InputStream in = TestTokenizers.resource(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
