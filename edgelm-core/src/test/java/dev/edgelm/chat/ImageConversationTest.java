package dev.edgelm.chat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.template.ChatTemplate;
import dev.edgelm.tokenizer.AddedToken;
import dev.edgelm.tokenizer.ByteLevel;
import dev.edgelm.tokenizer.PreTokenizer;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.PatchGrid;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A conversation with an image on tiny-vl, through the stock Qwen3.5 chat template and a byte-level stand-in
 * tokenizer on tiny-vl's vocabulary (bytes 0..255, the special tokens at their tiny-vl ids). Turn 2 reuses the state
 * that holds turn 1's image and must continue exactly as a fresh session that prefills the whole turn-2 prompt.
 */
class ImageConversationTest {
    static Engine engine;
    static ChatFormat format;
    static PatchGrid.Pixels pixels;

    @BeforeAll
    static void open() throws Exception {
        engine = Engine.load(Fixtures.path("qwen35/tiny-vl"), new EngineOptions(2, 512, 512));
        List<String> bytes = new ArrayList<>();
        for (int b = 0; b < 256; b++) {
            bytes.add(String.valueOf(ByteLevel.charOf(b)));
        }
        List<AddedToken> added = List.of(AddedToken.of(500, "<|endoftext|>", true), AddedToken.of(501, "<|im_start|>", true),
                AddedToken.of(502, "<|im_end|>", true), AddedToken.of(503, "<|vision_start|>", true),
                AddedToken.of(504, "<|vision_end|>", true), AddedToken.of(506, "<|image_pad|>", true),
                AddedToken.of(507, "<|video_pad|>", true), AddedToken.of(508, "<think>", false),
                AddedToken.of(509, "</think>", false));
        Tokenizer tokenizer = Tokenizer.create(bytes, List.of(), added, null, PreTokenizer.named("qwen2"), false);
        String source = Files.readString(Fixtures.path("qwen35/tiny-chat/chat_template.jinja"));
        ChatTemplate template = ChatTemplate.parse(source, "stock template", Map.of());
        format = new ChatFormat(tokenizer, template, new int[] {502, 500}, "test");
        int[] thw = Fixtures.npy("qwen35/tiny-vl/golden/image_grid_thw.npy").toIntArray();
        pixels = new PatchGrid.Pixels(Fixtures.npy("qwen35/tiny-vl/golden/pixel_values.npy").floats(),
                new PatchGrid(thw[0], thw[1], thw[2]));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static Map<String, Object> userWithImage(String text) {
        return Map.of("role", "user", "content", List.of(Map.of("type", "image", "image", pixels),
                Map.of("type", "text", "text", text)));
    }

    static final GenerationOptions GREEDY = GenerationOptions.greedy().toBuilder().maxNewTokens(6).build();

    @Test
    void secondTurnReusesTheImageStateAndEqualsAFreshPrefill() {
        Conversation chat = Conversation.start(engine, format);
        Reply first = chat.send(userWithImage("What is it?"), GREEDY, ChatListener.NONE);
        assertTrue(first.promptTokens() > 64, "the image's 64 tokens are in the prompt: " + first.promptTokens());
        Reply second = chat.send("And then?", GREEDY, ChatListener.NONE);
        assertTrue(second.reusedTokens() > 64 + 3, "turn 2 reuses the state past the image: " + second.reusedTokens());

        // from scratch: the same turn-2 prompt, expanded, prefilled at once on a fresh session
        List<Map<String, ?>> messages = List.of(
                Map.of("role", "user", "content", List.of(Map.of("type", "image"), Map.of("type", "text", "text", "What is it?"))),
                chat.messages().get(1), chat.messages().get(2));
        String prompt = format.template().render(messages, null, true, Map.of("enable_thinking", false));
        int[] rendered = format.tokenizer().encode(prompt);
        ImageEmbedding image = engine.encodeImage(pixels);
        int[] ids = expand(rendered, 506, image.tokens());
        assertEquals(second.promptTokens(), ids.length);
        Session fresh = engine.newSession();
        fresh.prefill(ids, List.of(image));
        assertArrayEquals(fresh.generate(GREEDY).tokens(), second.tokens());
    }

    @Test
    void videoPartsAreRefused() {
        Conversation chat = Conversation.start(engine, format);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> chat.send(Map.of("role", "user", "content",
                List.of(Map.of("type", "video", "video", "clip.mp4"))), GREEDY, ChatListener.NONE));
        assertTrue(e.getMessage().contains("video"), e.getMessage());
    }

    static int[] expand(int[] ids, int pad, int n) {
        int count = 0;
        for (int id : ids) {
            count += id == pad ? 1 : 0;
        }
        int[] out = new int[ids.length + count * (n - 1)];
        int o = 0;
        for (int id : ids) {
            if (id == pad) {
                for (int k = 0; k < n; k++) {
                    out[o++] = pad;
                }
            } else {
                out[o++] = id;
            }
        }
        return out;
    }
}
