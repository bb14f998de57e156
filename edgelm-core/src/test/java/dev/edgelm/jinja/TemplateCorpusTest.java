package dev.edgelm.jinja;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Real chat templates (llama.cpp's collection under {@code templates/corpus/}, see SOURCES.md there) rendered over
 * a set of conversations and compared byte for byte with Python jinja2's renders
 * ({@code templates/corpus-renders.json}, by {@code tools/template-corpus/render_corpus.py}). Each render is the
 * same text, or the same refusal (jinja2 raised, so must EdgeLM), or a {@link TemplateException} saying the
 * construct is not supported; any other difference fails.
 */
class TemplateCorpusTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The instant the expected renders were made at (strftime_now). */
    private static final LocalDateTime NOW = LocalDateTime.of(2026, 1, 15, 9, 5, 7);

    private enum Outcome { SAME, SAME_ERROR, UNSUPPORTED }

    private static JsonNode renders() throws IOException {
        try (InputStream in = TemplateCorpusTest.class.getResourceAsStream("/templates/corpus-renders.json")) {
            return JSON.readTree(in);
        }
    }

    private static String source(String name) throws IOException {
        try (InputStream in = TemplateCorpusTest.class.getResourceAsStream("/templates/corpus/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static boolean saysUnsupported(TemplateException e) {
        String m = e.getMessage();
        return m.contains("not supported") || m.contains("unsupported");
    }

    /** One render: the outcome, or an AssertionError describing the difference. */
    private static Outcome check(Template t, JsonNode conversation, JsonNode expected, Map<String, Object> special) {
        Map<String, Object> vars = new LinkedHashMap<>();
        vars.put("messages", JSON.convertValue(conversation.get("messages"), Object.class));
        vars.put("tools", JSON.convertValue(conversation.get("tools"), Object.class));
        vars.put("documents", null);
        vars.put("add_generation_prompt", conversation.get("add_generation_prompt").asBoolean());
        vars.putAll(special);
        vars.put("strftime_now", (Runtime.Callable) (rt, a, kw) -> Builtins.strftime(Py.str(a.get(0)), NOW));
        Map<String, Object> kwargs = JSON.convertValue(conversation.get("kwargs"), Map.class);
        vars.putAll(kwargs);
        String out;
        try {
            out = t.render(vars);
        } catch (TemplateException e) {
            if (expected.has("error")) {
                return Outcome.SAME_ERROR;
            }
            if (saysUnsupported(e)) {
                System.out.println("template corpus: unsupported: " + e.getMessage() + " (line " + e.line() + ")");
                return Outcome.UNSUPPORTED;
            }
            throw new AssertionError("jinja2 renders it, EdgeLM fails: " + e.getMessage() + " (line " + e.line() + ")");
        }
        if (expected.has("error")) {
            throw new AssertionError("jinja2 fails (" + expected.get("error").asText() + "), EdgeLM renders:\n" + out);
        }
        assertEquals(expected.get("expected").asText(), out);
        return Outcome.SAME;
    }

    @TestFactory
    Stream<DynamicTest> everyTemplateRendersLikeJinja2OrSaysWhatItDoesNotSupport() throws IOException {
        JsonNode doc = renders();
        Map<String, Object> special = JSON.convertValue(doc.get("special_tokens"), Map.class);
        Map<String, JsonNode> conversations = new LinkedHashMap<>();
        doc.get("conversations").forEach(c -> conversations.put(c.get("name").asText(), c));
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode entry : doc.get("templates")) {
            String name = entry.get("template").asText();
            tests.add(DynamicTest.dynamicTest(name, () -> {
                Template t;
                try {
                    t = Template.parse(source(name));
                } catch (TemplateException e) {
                    if (entry.has("parse_error") || saysUnsupported(e)) {
                        return;
                    }
                    throw new AssertionError("jinja2 parses it, EdgeLM fails: " + e.getMessage() + " (line " + e.line() + ")");
                }
                if (entry.has("parse_error")) {
                    fail("jinja2 cannot parse it (" + entry.get("parse_error").asText() + "), EdgeLM can");
                }
                for (JsonNode c : entry.get("cases")) {
                    String conv = c.get("name").asText();
                    try {
                        check(t, conversations.get(conv), c, special);
                    } catch (AssertionError e) {
                        throw new AssertionError(name + " over " + conv + ": " + e.getMessage(), e);
                    }
                }
            }));
        }
        return tests.stream();
    }

    /** Filter blocks (firefunction's template trims its preamble with one), as Jinja's documentation shows them. */
    @Test
    void filterBlocks() {
        assertEquals("THIS TEXT BECOMES UPPERCASE",
                Template.parse("{% filter upper %}This text becomes uppercase{% endfilter %}").render(Map.of()));
        assertEquals("A-B|", Template.parse("{% filter trim | upper | replace(' ', '-') %}  a b \n{% endfilter %}|").render(Map.of()));
    }

    /** The pass rate docs/tokenizer.md quotes: of all renders, how many are identical to jinja2's. */
    @Test
    void mostRendersAreIdentical() throws IOException {
        JsonNode doc = renders();
        Map<String, Object> special = JSON.convertValue(doc.get("special_tokens"), Map.class);
        Map<String, JsonNode> conversations = new LinkedHashMap<>();
        doc.get("conversations").forEach(c -> conversations.put(c.get("name").asText(), c));
        int same = 0;
        int total = 0;
        int templatesAllSame = 0;
        for (JsonNode entry : doc.get("templates")) {
            Template t;
            try {
                t = Template.parse(source(entry.get("template").asText()));
            } catch (TemplateException e) {
                total += entry.get("cases").size();
                System.out.println("template corpus: " + entry.get("template").asText() + " not parsed: " + e.getMessage());
                continue;
            }
            boolean all = true;
            for (JsonNode c : entry.get("cases")) {
                total++;
                Outcome o;
                try {
                    o = check(t, conversations.get(c.get("name").asText()), c, special);
                } catch (AssertionError e) {
                    o = null;
                }
                if (o == Outcome.SAME || o == Outcome.SAME_ERROR) {
                    same++;
                } else {
                    all = false;
                    System.out.println("template corpus: " + entry.get("template").asText() + " over " + c.get("name").asText()
                            + ": " + (o == null ? "different" : "unsupported"));
                }
            }
            templatesAllSame += all ? 1 : 0;
        }
        System.out.println("template corpus: " + same + " of " + total + " renders identical to jinja2; "
                + templatesAllSame + " of " + doc.get("templates").size() + " templates identical in every render");
        assertTrue(same * 10 >= total * 9, same + " of " + total);
    }
}
