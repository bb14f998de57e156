package dev.edgelm.template;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.tokenizer.IncrementalDecoder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The tiny-chat checkpoint's chat flow goldens: prompt texts, prompt ids, stop tokens and reply texts. */
class TinyChatGoldenTest {
    private static final Path DIR = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
    private static ChatFormat format;
    private static JsonNode manifest;

    private static synchronized ChatFormat format() throws IOException {
        if (format == null) {
            format = ChatFormat.load(DIR);
            manifest = new ObjectMapper().readTree(DIR.resolve("golden/manifest.json").toFile());
        }
        return format;
    }

    @ParameterizedTest
    @ValueSource(strings = {"turn1", "turn2", "think"})
    void promptRendersAndEncodesExactly(String name) throws IOException {
        ChatFormat f = format();
        JsonNode c = manifest.get("cases").get(name);
        List<JsonNode> messages = new ArrayList<>();
        c.get("messages").forEach(messages::add);
        JsonNode args = c.get("apply_chat_template_args");
        Map<String, Object> kwargs = args.has("enable_thinking") ? Map.of("enable_thinking", args.get("enable_thinking").asBoolean()) : Map.of();
        String prompt = f.template().render(messages, null, args.get("add_generation_prompt").asBoolean(), kwargs);
        assertEquals(Files.readString(DIR.resolve("golden/" + name + "_prompt.txt")), prompt);
        int[] expectedIds = Npy.read(DIR.resolve("golden/" + name + "_prompt_ids.npy")).toIntArray();
        assertArrayEquals(expectedIds, f.tokenizer().encode(prompt));
        assertArrayEquals(expectedIds, f.encodePrompt(messages, null, args.get("add_generation_prompt").asBoolean(), kwargs));
    }

    @ParameterizedTest
    @ValueSource(strings = {"turn1", "turn2", "think"})
    void replyDecodesToTheGoldenText(String name) throws IOException {
        ChatFormat f = format();
        int[] generated = Npy.read(DIR.resolve("golden/" + name + "_generated_ids.npy")).toIntArray();
        int end = generated.length;
        if (f.isStopToken(generated[end - 1])) {
            end--;
        }
        int[] reply = Arrays.copyOf(generated, end);
        String expected = Files.readString(DIR.resolve("golden/" + name + "_reply.txt"));
        assertEquals(expected, f.tokenizer().decode(reply, true));
        assertEquals(expected, f.tokenizer().decode(reply, false));
        IncrementalDecoder d = f.tokenizer().newDecoder(true);
        StringBuilder sb = new StringBuilder();
        for (int id : reply) {
            sb.append(d.accept(id));
        }
        assertEquals(expected, sb.append(d.finish()).toString());
    }

    @Test
    void stopTokensComeFromTheGenerationConfigAndTheTokenizerConfig() throws IOException {
        // README: eos_token_id [8194, 8192] (<|im_end|>, <|endoftext|>); tokenizer_config eos_token <|im_end|>
        assertArrayEquals(new int[] {8194, 8192}, format().stopTokenIds());
        int[] turn1 = Npy.read(DIR.resolve("golden/turn1_generated_ids.npy")).toIntArray();
        assertEquals(8194, turn1[turn1.length - 1]);
    }
}
