package dev.edgelm.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The stock Qwen3.5 template (and the Qwen3 one) rendered byte for byte as Python jinja2 renders them in
 * transformers' environment (expected renders from tools/template-reference).
 */
class ChatTemplateReferenceTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path RES = Path.of("src/test/resources");

    @TestFactory
    Stream<DynamicTest> qwen35() throws IOException {
        Path dir = RES.resolve("fixtures/qwen35/tiny-chat");
        ChatTemplate template = ChatTemplate.parse(Files.readString(dir.resolve("chat_template.jinja")), "chat_template.jinja",
                ChatTemplate.specialTokensOf(JSON.readTree(dir.resolve("tokenizer_config.json").toFile())));
        return cases(template, "qwen35-renders.json");
    }

    @TestFactory
    Stream<DynamicTest> qwen3() throws IOException {
        JsonNode config = JSON.readTree(RES.resolve("tokenizers/qwen3/tokenizer_config.json").toFile());
        ChatTemplate template = ChatTemplate.parse(config.get("chat_template").asText(), "qwen3", ChatTemplate.specialTokensOf(config));
        return cases(template, "qwen3-renders.json");
    }

    private static Stream<DynamicTest> cases(ChatTemplate template, String file) throws IOException {
        JsonNode ref = JSON.readTree(RES.resolve("templates").resolve(file).toFile());
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : ref.get("cases")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> {
                List<JsonNode> messages = new ArrayList<>();
                c.get("messages").forEach(messages::add);
                List<JsonNode> tools = null;
                if (!c.get("tools").isNull()) {
                    tools = new ArrayList<>();
                    c.get("tools").forEach(tools::add);
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> kwargs = JSON.convertValue(c.get("kwargs"), Map.class);
                boolean gen = c.get("add_generation_prompt").asBoolean();
                if (c.has("expected")) {
                    assertEquals(c.get("expected").asText(), template.render(messages, tools, gen, kwargs));
                } else {
                    List<JsonNode> m = messages;
                    List<JsonNode> t = tools;
                    ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> template.render(m, t, gen, kwargs));
                    assertEquals(c.get("error").asText(), e.templateMessage());
                }
            }));
        }
        return tests.stream();
    }
}
