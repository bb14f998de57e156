package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A tokenizer that cannot be built is an error that names the file it came from. */
class TokenizerFileErrorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** The 256 byte-level tokens every byte-level BPE vocabulary holds, ids 0..255. */
    private static String[] byteTokens() {
        String[] tokens = new String[256];
        for (int b = 0; b < 256; b++) {
            tokens[b] = String.valueOf(ByteLevel.charOf(b));
        }
        return tokens;
    }

    private Path tokenizerJson(String[] vocab, List<String> merges, Map<String, Object> preTokenizer) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        ObjectNode v = model.putObject("vocab");
        for (int i = 0; i < vocab.length; i++) {
            v.put(vocab[i], i);
        }
        merges.forEach(model.putArray("merges")::add);
        if (preTokenizer != null) {
            root.set("pre_tokenizer", JSON.valueToTree(preTokenizer));
        }
        Path file = dir.resolve("tokenizer.json");
        JSON.writeValue(file.toFile(), root);
        return file;
    }

    private Path gguf(String[] tokens, int[] types) {
        Map<String, GgufValue> meta = new LinkedHashMap<>();
        meta.put(GgufTokenizerData.MODEL, GgufValue.string("gpt2"));
        meta.put(GgufTokenizerData.PRE, GgufValue.string("qwen2"));
        meta.put(GgufTokenizerData.TOKENS, GgufValue.stringArray(tokens));
        meta.put(GgufTokenizerData.TOKEN_TYPE, GgufValue.i32Array(types));
        meta.put(GgufTokenizerData.MERGES, GgufValue.stringArray(new String[0]));
        Path file = dir.resolve("tok.gguf");
        try (GgufWriter w = GgufWriter.create(file, meta, List.of())) {
            w.finish();
        }
        return file;
    }

    @Test
    void aMergeOfAMissingTokenInTokenizerJson() throws IOException {
        Path file = tokenizerJson(byteTokens(), List.of("a b"), null);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> TokenizerJson.load(file));
        assertEquals(file + ": merge 0 (a b): token 'ab' is not in the vocabulary", e.getMessage());
    }

    @Test
    void aVocabularyWithoutTheByteTokensInTokenizerJson() throws IOException {
        Path file = tokenizerJson(new String[] {"a", "b"}, List.of(), null);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> TokenizerJson.load(file));
        assertEquals(file + ": vocabulary has no token for byte 0x00 ('Ā'): not a byte-level BPE vocabulary", e.getMessage());
    }

    @Test
    void aSplitPatternThatDoesNotCompileInTokenizerJson() throws IOException {
        Map<String, Object> split = Map.of("type", "Split", "behavior", "Isolated", "pattern", Map.of("Regex", "(ab"));
        Path file = tokenizerJson(byteTokens(), List.of(), split);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> TokenizerJson.load(file));
        assertEquals(file + ": pre-tokenizer regex cannot be compiled: Unclosed group: (ab", e.getMessage());
    }

    @Test
    void tokenTypesThatDoNotMatchTheTokensInAGguf() {
        Path file = gguf(byteTokens(), new int[] {GgufTokenizerData.TYPE_NORMAL});
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> TokenizerGguf.load(file));
        assertEquals(file + ": " + GgufTokenizerData.TOKEN_TYPE + " has 1 entries but " + GgufTokenizerData.TOKENS
                + " has 256", e.getMessage());
    }

    @Test
    void aVocabularyWithoutTheByteTokensInAGguf() {
        Path file = gguf(new String[] {"a", "b"}, new int[] {GgufTokenizerData.TYPE_NORMAL, GgufTokenizerData.TYPE_NORMAL});
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> TokenizerGguf.load(file));
        assertEquals(file + ": vocabulary has no token for byte 0x00 ('Ā'): not a byte-level BPE vocabulary", e.getMessage());
    }
}
