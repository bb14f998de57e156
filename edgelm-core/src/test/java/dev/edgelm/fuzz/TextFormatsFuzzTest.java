package dev.edgelm.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.edgelm.Fixtures;
import dev.edgelm.jinja.Limits;
import dev.edgelm.jinja.Template;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerJson;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fuzz targets for the text formats: {@code config.json}, {@code tokenizer.json}, the byte-level BPE encoder and
 * decoders on arbitrary text and ids, the Jinja engine (lexer, parser, renderer under its sandbox limits) and the
 * chat-message JSON a conversation arrives as. Corpora: {@code src/test/resources/dev/edgelm/fuzz/TextFormatsFuzzTestInputs/}.
 */
class TextFormatsFuzzTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Smaller than the defaults so that the fuzzer spends its time on many inputs rather than on a few that run
     * to the default limits; any input that is slow or large under these is a finding all the same.
     */
    private static final Limits FUZZ_LIMITS = new Limits(1 << 20, 1 << 16, 1_000_000, 200, 1000);

    private static Tokenizer qwen;
    private static ChatFormat chat;

    /** The Qwen3.5 tokenizer and chat template of the tiny chat checkpoint, loaded once per JVM. */
    private static synchronized ChatFormat chat() {
        if (chat == null) {
            chat = ChatFormat.load(Fixtures.path("qwen35/tiny-chat"));
            qwen = chat.tokenizer();
        }
        return chat;
    }

    @FuzzTest
    void configJson(byte[] data) {
        Hostile.endsCleanly(() -> Qwen35Config.load(Hostile.write("config/config.json", data)));
    }

    @FuzzTest
    void tokenizerJson(byte[] data) {
        Hostile.endsCleanly(() -> {
            Tokenizer t = TokenizerJson.read(new ByteArrayInputStream(data), "fuzz/tokenizer.json");
            int[] ids = t.encode("Hello, wörld! 123 <|im_end|>  \n\t日本");
            t.decode(ids, false);
            t.decode(ids, true);
        });
    }

    /**
     * The Qwen3.5 tokenizer on arbitrary input. The first byte picks what the rest is: text (UTF-8, invalid
     * sequences replaced) or token ids (three bytes each). Encoding then decoding gives back the text up to NFC
     * (special tokens split); the streaming decoder's pieces add up to the whole decode.
     */
    @FuzzTest
    void bpe(byte[] data) {
        Tokenizer t = chat().tokenizer();
        if (data.length == 0) {
            return;
        }
        if ((data[0] & 1) == 0) {
            String text = new String(data, 1, data.length - 1, StandardCharsets.UTF_8);
            int[] ids = t.encode(text, true);
            // NFC on both sides: pieces between added tokens are normalized apart, as Hugging Face does
            assertEquals(nfc(text), nfc(t.decode(ids, false)), "round trip of " + text);
            t.encode(text, false);
            assertEquals(t.decode(ids, false), streamed(t, ids, false));
        } else {
            int n = (data.length - 1) / 3;
            int[] ids = new int[n];
            for (int i = 0; i < n; i++) {
                int v = (data[1 + 3 * i] & 0xff) | (data[2 + 3 * i] & 0xff) << 8 | (data[3 + 3 * i] & 0xff) << 16;
                ids[i] = (data[0] & 2) == 0 ? v % t.vocabSize() : v - (1 << 23); // in range, or anything
            }
            Hostile.endsCleanly(() -> {
                String whole = t.decode(ids, (data[0] & 4) != 0);
                assertEquals(whole, streamed(t, ids, (data[0] & 4) != 0));
            });
        }
    }

    private static String nfc(String s) {
        return Normalizer.normalize(s, Normalizer.Form.NFC);
    }

    private static String streamed(Tokenizer t, int[] ids, boolean skipSpecial) {
        IncrementalDecoder d = t.newDecoder(skipSpecial);
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            sb.append(d.accept(id));
        }
        return sb.append(d.finish()).toString();
    }

    /** Any text as a template, rendered over a small conversation under {@link #FUZZ_LIMITS}. */
    @FuzzTest
    void template(byte[] data) {
        Hostile.endsCleanly(() -> {
            Template t = Template.parse(new String(data, StandardCharsets.UTF_8), FUZZ_LIMITS);
            Map<String, Object> vars = new LinkedHashMap<>();
            vars.put("messages", List.of(Map.of("role", "system", "content", "Be brief."),
                    Map.of("role", "user", "content", "Hi <b>"),
                    Map.of("role", "assistant", "content", "", "reasoning_content", "hm",
                            "tool_calls", List.of(Map.of("function", Map.of("name", "f", "arguments", Map.of("x", 1)))))));
            vars.put("tools", List.of(Map.of("type", "function", "function", Map.of("name", "f", "parameters", Map.of()))));
            vars.put("add_generation_prompt", true);
            vars.put("bos_token", "<s>");
            vars.put("eos_token", "</s>");
            t.render(vars);
        });
    }

    /**
     * A conversation as JSON ({@code [messages]} or {@code {"messages": [...], "tools": [...], "kwargs": {...}}})
     * through the Qwen3.5 chat template and tokenizer, as {@code edgelm template} and the chat take it.
     */
    @FuzzTest
    void chatMessages(byte[] data) {
        ChatFormat format = chat();
        JsonNode root;
        try {
            root = JSON.readTree(data);
        } catch (java.io.IOException notJson) {
            // Jackson's parser (and its encoding detection) is not ours to fuzz; the commands report any
            // IOException of it as "not readable JSON"
            return;
        }
        if (root == null) {
            return;
        }
        JsonNode messages = root.isObject() ? root.path("messages") : root;
        JsonNode tools = root.isObject() ? root.get("tools") : null;
        JsonNode kwargs = root.isObject() ? root.get("kwargs") : null;
        Hostile.endsCleanly(() -> {
            if (!messages.isArray()) {
                return;
            }
            Map<String, Object> extra = new LinkedHashMap<>();
            if (kwargs != null && kwargs.isObject()) {
                kwargs.properties().forEach(e -> extra.put(e.getKey(), e.getValue()));
            }
            format.encodePrompt(list(messages), tools != null && tools.isArray() ? list(tools) : null, true, extra);
        });
    }

    private static List<JsonNode> list(JsonNode array) {
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
