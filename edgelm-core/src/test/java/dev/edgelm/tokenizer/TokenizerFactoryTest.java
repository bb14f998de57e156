package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A tokenizer built from plain parts (as a GGUF reader would: token strings by id, merges as pairs, added
 * tokens, a named pre-tokenizer) encodes exactly as Hugging Face does.
 */
class TokenizerFactoryTest {

    private static Tokenizer fromParts(String preTokenizer) throws IOException {
        JsonNode json = new ObjectMapper().readTree(TestTokenizers.TINY_CHAT.resolve("tokenizer.json").toFile());
        String[] byId = new String[8192];
        json.get("model").get("vocab").fields().forEachRemaining(e -> byId[e.getValue().asInt()] = e.getKey());
        List<String[]> merges = new ArrayList<>();
        for (JsonNode m : json.get("model").get("merges")) {
            merges.add(m.isArray() ? new String[] {m.get(0).asText(), m.get(1).asText()} : m.asText().split(" "));
        }
        List<AddedToken> added = new ArrayList<>();
        for (JsonNode t : json.get("added_tokens")) {
            added.add(AddedToken.of(t.get("id").asInt(), t.get("content").asText(), t.get("special").asBoolean()));
        }
        return Tokenizer.create(Arrays.asList(byId), merges, added, Normalizer.Form.NFC, PreTokenizer.named(preTokenizer), false);
    }

    @Test
    void buildsTheSameTokenizerFromPlainParts() throws IOException {
        Tokenizer tok = fromParts("qwen2");
        JsonNode ref = TestTokenizers.json("tokenizers/tiny-chat-reference-cases.json");
        for (JsonNode c : ref.get("cases")) {
            assertArrayEquals(TestTokenizers.ids(c.get("ids")), tok.encode(c.get("text").asText()), c.get("text").asText());
        }
        assertEquals(8218, tok.vocabSize());
        assertEquals("<|im_end|>", tok.token(8194));
    }

    @Test
    void unknownPreTokenizerAndBrokenMergesAreClearErrors() {
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> PreTokenizer.named("llama-bpe-v9"));
        assertEquals("pre-tokenizer 'llama-bpe-v9' is not supported (known: qwen2, qwen35, gpt2)", e.getMessage());
        List<String> tokens = new ArrayList<>();
        for (int b = 0; b < 256; b++) {
            tokens.add(String.valueOf(ByteLevel.charOf(b)));
        }
        List<String[]> merges = List.<String[]>of(new String[] {"a", "b"});
        EdgeLmException m = assertThrows(EdgeLmException.class,
                () -> Tokenizer.create(tokens, merges, List.of(), null, PreTokenizer.named("qwen2"), false));
        assertEquals("merge 0 (a b): token 'ab' is not in the vocabulary", m.getMessage());
    }
}
