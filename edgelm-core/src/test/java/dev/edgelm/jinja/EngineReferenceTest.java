package dev.edgelm.jinja;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Small templates, one Python/Jinja behaviour each, against Python jinja2's renders (tools/template-reference). */
class EngineReferenceTest {
    /** Error types whose text the engine reproduces word for word. */
    private static final Set<String> EXACT_ERRORS = Set.of("TemplateError", "UndefinedError", "SecurityError", "TypeError");

    @TestFactory
    Stream<DynamicTest> engineCases() throws IOException {
        ObjectMapper json = new ObjectMapper();
        JsonNode ref;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("templates/engine-renders.json")) {
            ref = json.readTree(in);
        }
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : ref.get("cases")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> {
                Template t = Template.parse(c.get("template").asText());
                @SuppressWarnings("unchecked")
                Map<String, Object> vars = json.convertValue(c.get("variables"), Map.class);
                if (c.has("expected")) {
                    assertEquals(c.get("expected").asText(), t.render(vars));
                } else {
                    TemplateException e = assertThrows(TemplateException.class, () -> t.render(vars));
                    if (EXACT_ERRORS.contains(c.get("error_type").asText())) {
                        assertEquals(c.get("error").asText(), e.getMessage());
                    }
                }
            }));
        }
        return tests.stream();
    }
}
