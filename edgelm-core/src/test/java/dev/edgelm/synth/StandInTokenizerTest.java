package dev.edgelm.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.convert.HfTokenizerFiles;
import dev.edgelm.format.gguf.GgufTokenizerData;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class StandInTokenizerTest {
    static final Path TINY_CHAT_TOKENIZER = Path.of("src/test/resources/fixtures/qwen35/tiny-chat/tokenizer.json");

    @Test
    void byteTokensAreTheFirst256TokensOfAQwenVocabulary() throws IOException {
        JsonNode vocab = new ObjectMapper().readTree(TINY_CHAT_TOKENIZER.toFile()).path("model").path("vocab");
        String[] expected = new String[256];
        vocab.fields().forEachRemaining(e -> {
            if (e.getValue().asInt() < 256) {
                expected[e.getValue().asInt()] = e.getKey();
            }
        });
        assertArrayEquals(expected, StandInTokenizer.byteTokens());
    }

    @Test
    void addedTokensHaveTheOrderAndTypesConvertGivesTheQwenTokenizer() {
        // tiny-chat carries the Qwen3 family's tokenizer files, added tokens from id 8192
        GgufTokenizerData converted = HfTokenizerFiles.read(TINY_CHAT_TOKENIZER.getParent(), 8192 + 26).orElseThrow();
        GgufTokenizerData t = StandInTokenizer.build(SyntheticModelTest.TINY);
        int first = SyntheticModelTest.TINY.firstSpecialId();
        for (int k = 0; k < 26; k++) {
            assertEquals(converted.tokens()[8192 + k], t.tokens()[first + k]);
            assertEquals(converted.tokenTypes()[8192 + k], t.tokenTypes()[first + k], converted.tokens()[8192 + k]);
        }
        assertEquals(26, StandInTokenizer.SPECIAL_TOKENS.size());
        for (int i = 0; i < 256; i++) {
            assertEquals(converted.tokenTypes()[i], t.tokenTypes()[i]);
        }
    }

    @Test
    void releasedVocabularyHasTheSpecialTokensAtTheirReleasedIds() {
        SynthShape shape = SynthShape.released("2b");
        GgufTokenizerData t = StandInTokenizer.build(shape);
        assertEquals(248_320, t.tokens().length);
        // ids published for Qwen3.5
        assertEquals("<|endoftext|>", t.tokens()[248_044]);
        assertEquals("<|im_start|>", t.tokens()[248_045]);
        assertEquals("<|im_end|>", t.tokens()[248_046]);
        assertEquals("<|vision_start|>", t.tokens()[248_053]);
        assertEquals("<|vision_end|>", t.tokens()[248_054]);
        assertEquals("<|image_pad|>", t.tokens()[248_056]);
        assertEquals("<|video_pad|>", t.tokens()[248_057]);
        assertEquals("[PAD256]", t.tokens()[256]);
        assertEquals(GgufTokenizerData.TYPE_UNUSED, t.tokenTypes()[248_043]);
        assertEquals("qwen35", t.pre());
        assertEquals("gpt2", t.model());
        assertEquals(0, t.merges().length);
        assertEquals(-1, t.bosId());
        assertArrayEquals(new int[] {248_046, 248_044}, t.stopTokenIds(StandInTokenizer.generationDefaults(shape)));
    }
}
