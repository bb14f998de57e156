package dev.edgelm.template;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerJson;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** tiny-chat converted to GGUF chats exactly like the checkpoint folder: same ids, renders and stops. */
class GgufChatFormatTest {
    static final Path FIXTURES = Path.of("src/test/resources/fixtures/qwen35");
    static final Path DIR = FIXTURES.resolve("tiny-chat");

    @TempDir
    static Path tmp;
    static Path gguf;
    static ChatFormat fromGguf;
    static ChatFormat fromFolder;

    @BeforeAll
    static void convert() {
        gguf = tmp.resolve("tiny-chat.gguf");
        GgufConverter.convert(DIR, gguf, QuantRecipe.BF16, w -> { }, null);
        fromGguf = ChatFormat.load(gguf);
        fromFolder = ChatFormat.load(DIR);
    }

    @ParameterizedTest
    @ValueSource(strings = {"turn1", "turn2", "think"})
    void goldenPromptsRenderEncodeAndDecodeTheSame(String name) throws Exception {
        String prompt = Files.readString(DIR.resolve("golden/" + name + "_prompt.txt"));
        int[] ids = Npy.read(DIR.resolve("golden/" + name + "_prompt_ids.npy")).toIntArray();
        assertArrayEquals(ids, fromGguf.tokenizer().encode(prompt));
        assertEquals(prompt, fromGguf.tokenizer().decode(ids, false));
        int[] generated = Npy.read(DIR.resolve("golden/" + name + "_generated_ids.npy")).toIntArray();
        String reply = Files.readString(DIR.resolve("golden/" + name + "_reply.txt"));
        assertEquals(reply, fromGguf.tokenizer().decode(generated, true), "the stop token is special: skipped");
    }

    @Test
    void templateRendersTheSame() {
        List<Map<String, Object>> messages = List.of(
                Map.of("role", "system", "content", "You are a helpful assistant."),
                Map.of("role", "user", "content", "What is the capital of France? Answer in one word."),
                Map.of("role", "assistant", "content", "<think>\nhm\n</think>\n\n Paris "),
                Map.of("role", "user", "content", "And of Germany?"));
        for (Map<String, ?> kwargs : List.of(Map.of("enable_thinking", false), Map.of("enable_thinking", true), Map.<String, Object>of())) {
            assertEquals(fromFolder.template().render(messages, null, true, kwargs), fromGguf.template().render(messages, null, true, kwargs));
        }
        assertEquals(fromFolder.template().source(), fromGguf.template().source());
    }

    @Test
    void sameIdsForMixedTextAndTheSameSpecialTokens() {
        String text = "Hello, world! <|im_start|>user\n<think>x</think> naïve café 東京 🤖 1234 \r\n  tabs\tand    spaces<|im_end|>";
        Tokenizer folder = fromFolder.tokenizer();
        Tokenizer gguf = fromGguf.tokenizer();
        assertArrayEquals(folder.encode(text), gguf.encode(text));
        assertArrayEquals(folder.encode(text, true), gguf.encode(text, true));
        // README: the 14 added tokens from <|endoftext|> (8192) on are special, the 12 from <tool_call> (8206) on are
        // not; the converter, like llama.cpp's, also makes the <|fim_*|>, <|repo_name|>, <|file_sep|> ones control tokens
        for (int id = 8192; id < 8218; id++) {
            assertEquals(folder.token(id), gguf.token(id));
            assertEquals(id < 8206 || folder.token(id).startsWith("<|"), gguf.isSpecial(id), "id " + id);
        }
        assertFalse(gguf.isSpecial(8216), "<think> is not special");
        assertEquals(8192, gguf.id("<|endoftext|>").getAsInt());
        assertTrue(gguf.id("[PAD8218]").isEmpty(), "unused rows are no tokens");
        assertThrows(EdgeLmException.class, () -> gguf.token(8300));
    }

    @Test
    void stopTokensAreImEndAndEndOfText() {
        assertArrayEquals(new int[] {8194, 8192}, fromGguf.stopTokenIds());
        assertArrayEquals(fromFolder.stopTokenIds(), fromGguf.stopTokenIds());
    }

    @Test
    void tokenizeAcceptsTheGgufFile() {
        assertEquals(TokenizerJson.loadFrom(DIR).encode("naïve 東京").length, TokenizerJson.loadFrom(gguf).encode("naïve 東京").length);
    }

    @Test
    void engineOnTheGgufTakesTheGenerationDefaults() {
        try (Engine engine = Engine.load(gguf, EngineOptions.defaults().withThreads(1))) {
            GenerationOptions o = engine.defaultGenerationOptions().build();
            assertTrue(o.isGreedy(), "do_sample false");
            assertArrayEquals(new int[] {8194, 8192}, o.stopTokenIds());
        }
    }

    @Test
    void aGgufWithoutTokenizerSaysSo() {
        Path bare = tmp.resolve("tiny-a.gguf");
        GgufConverter.convert(FIXTURES.resolve("tiny-a"), bare, QuantRecipe.BF16, w -> { }, null);
        assertFalse(ChatFormat.loadIfPresent(bare).isPresent());
        assertTrue(ChatFormat.loadIfPresent(gguf).isPresent());
        assertTrue(ChatFormat.loadIfPresent(DIR).isPresent());
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ChatFormat.load(bare));
        assertTrue(e.getMessage().contains("has no tokenizer"), e.getMessage());
    }
}
