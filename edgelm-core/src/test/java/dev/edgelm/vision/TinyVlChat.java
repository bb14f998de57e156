package dev.edgelm.vision;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.Fixtures;
import dev.edgelm.tokenizer.ByteLevel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * tiny-vl made chat-capable for end-to-end tests: its config and weights, the stock Qwen3.5 chat template (from
 * tiny-chat), and a byte-level stand-in tokenizer on tiny-vl's 512-id vocabulary: bytes at ids 0..255, "ab" at 256 (one merge), the special
 * tokens at their tiny-vl ids ({@code <|endoftext|>} 500, {@code <|im_start|>} 501, {@code <|im_end|>} 502,
 * {@code <|vision_start|>} 503, {@code <|vision_end|>} 504, {@code <|image_pad|>} 506, {@code <|video_pad|>} 507,
 * {@code <think>} 508, {@code </think>} 509), plain filler tokens elsewhere.
 */
public final class TinyVlChat {
    public static final Map<Integer, String> SPECIAL = Map.of(500, "<|endoftext|>", 501, "<|im_start|>", 502, "<|im_end|>",
            503, "<|vision_start|>", 504, "<|vision_end|>", 506, "<|image_pad|>", 507, "<|video_pad|>", 508, "<think>",
            509, "</think>");

    private TinyVlChat() {}

    /** Writes the folder into {@code dir} and returns it. */
    public static Path write(Path dir) {
        try {
            Path src = Fixtures.path("qwen35/tiny-vl");
            Files.copy(src.resolve("config.json"), dir.resolve("config.json"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(src.resolve("model.safetensors"), dir.resolve("model.safetensors"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(Fixtures.path("qwen35/tiny-chat/chat_template.jinja"), dir.resolve("chat_template.jinja"),
                    StandardCopyOption.REPLACE_EXISTING);
            ObjectMapper json = new ObjectMapper();
            ObjectNode tok = (ObjectNode) json.readTree(Fixtures.path("qwen35/tiny-chat/tokenizer.json").toFile());
            ObjectNode vocab = json.createObjectNode();
            for (int i = 0; i < 512; i++) {
                if (!SPECIAL.containsKey(i)) {
                    vocab.put(i < 256 ? String.valueOf(ByteLevel.charOf(i)) : i == 256 ? "ab" : "filler" + i, i);
                }
            }
            ObjectNode model = (ObjectNode) tok.get("model");
            model.set("vocab", vocab);
            ArrayNode merges = json.createArrayNode();
            merges.addArray().add("a").add("b"); // one merge: a BPE with none is refused as a byte-by-byte tokenizer
            model.set("merges", merges);
            ArrayNode added = json.createArrayNode();
            SPECIAL.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> added.addObject()
                    .put("id", e.getKey()).put("content", e.getValue()).put("single_word", false).put("lstrip", false)
                    .put("rstrip", false).put("normalized", false).put("special", e.getKey() < 508));
            tok.set("added_tokens", added);
            json.writeValue(dir.resolve("tokenizer.json").toFile(), tok);
            Files.writeString(dir.resolve("tokenizer_config.json"),
                    "{\"eos_token\": \"<|im_end|>\", \"pad_token\": \"<|endoftext|>\", \"bos_token\": null}");
            Files.writeString(dir.resolve("generation_config.json"), "{\"do_sample\": false, \"eos_token_id\": [502, 500]}");
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
