package dev.edgelm.chat.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Hand-written model outputs in the stock Qwen3.5 template's tool-call format (see the template's system text). */
class QwenToolCallParserTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** get_weather(city: string, days: integer), search(query: string, filters: object). */
    private static final Map<String, Set<String>> TOOLS = QwenToolCallParser.stringParameters(List.of(
            Map.of("type", "function", "function", Map.of("name", "get_weather", "parameters", Map.of("type", "object",
                    "properties", Map.of("city", Map.of("type", "string"), "days", Map.of("type", "integer"))))),
            Map.of("type", "function", "function", Map.of("name", "search", "parameters", Map.of("type", "object",
                    "properties", Map.of("query", Map.of("type", "string"), "filters", Map.of("type", "object")))))));

    private static final String ONE_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            + "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";

    private static Object tree(String json) throws Exception {
        return JSON.readValue(json, Object.class);
    }

    @Test
    void stringTypedParameterIsRawOtherIsJson() throws Exception {
        QwenToolCallParser p = QwenToolCallParser.parse(ONE_CALL, TOOLS);
        assertEquals("", p.content());
        assertEquals(1, p.calls().size());
        assertEquals("get_weather", p.calls().get(0).name());
        assertEquals(Map.of("city", "Paris", "days", 3), tree(p.calls().get(0).arguments()));
    }

    @Test
    void parametersInAnyOrderAndMultilineStringsAndObjects() throws Exception {
        String out = "Let me look.\n\n<tool_call>\n<function=search>\n<parameter=filters>\n{\"year\": 2024, \"tags\": [\"a\"]}\n"
                + "</parameter>\n<parameter=query>\nline one\nline \"two\"\n</parameter>\n</function>\n</tool_call>";
        QwenToolCallParser p = QwenToolCallParser.parse(out, TOOLS);
        assertEquals("Let me look.", p.content());
        assertEquals(Map.of("query", "line one\nline \"two\"", "filters", Map.of("year", 2024, "tags", List.of("a"))),
                tree(p.calls().get(0).arguments()));
    }

    @Test
    void stringLookingLikeJsonStaysAString() throws Exception {
        String out = "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n</function>\n</tool_call>";
        assertEquals(Map.of("city", "42"), tree(QwenToolCallParser.parse(out, TOOLS).calls().get(0).arguments()));
    }

    @Test
    void nonJsonValueOfATypedParameterFallsBackToAString() throws Exception {
        String out = "<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>";
        assertEquals(Map.of("days", "three"), tree(QwenToolCallParser.parse(out, TOOLS).calls().get(0).arguments()));
    }

    @Test
    void twoCallsAndAMissingToolCallTag() throws Exception {
        String out = "<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>\n"
                + "<tool_call>\n<function=search>\n</function>\n</tool_call>";
        QwenToolCallParser p = QwenToolCallParser.parse(out, TOOLS);
        assertEquals(2, p.calls().size());
        assertEquals(Map.of("city", "Rome"), tree(p.calls().get(0).arguments()));
        assertEquals("search", p.calls().get(1).name());
        assertEquals("{}", p.calls().get(1).arguments());
        assertEquals("", p.content());
    }

    @Test
    void duplicatedClosingParameterTagIsSkipped() throws Exception {
        String out = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</parameter>\n"
                + "</function>\n</tool_call>";
        QwenToolCallParser p = QwenToolCallParser.parse(out, TOOLS);
        assertEquals(Map.of("city", "Oslo"), tree(p.calls().get(0).arguments()));
        assertEquals("", p.content());
    }

    @Test
    void undeclaredFunctionAndGarbageComeBackAsContent() {
        String undeclared = "<tool_call>\n<function=rm_rf>\n<parameter=path>\n/\n</parameter>\n</function>\n</tool_call>";
        QwenToolCallParser p = QwenToolCallParser.parse(undeclared, TOOLS);
        assertTrue(p.calls().isEmpty());
        assertEquals(undeclared, p.content());
        String garbage = "<tool_call> what is this";
        QwenToolCallParser g = QwenToolCallParser.parse(garbage, TOOLS);
        assertTrue(g.calls().isEmpty());
        assertEquals(garbage, g.content());
        String cut = "text <tool_call>\n<function=get_w";
        assertEquals(cut, QwenToolCallParser.parse(cut, TOOLS).content());
    }

    @Test
    void truncatedCallIsClosedWithWhatWasRead() throws Exception {
        String out = "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar";
        QwenToolCallParser p = QwenToolCallParser.parse(out, TOOLS);
        assertEquals(Map.of("city", "Par"), tree(p.calls().get(0).arguments()));
    }

    @Test
    void characterByCharacterGivesTheSameEventsAsWhole() throws Exception {
        String out = "Sure <b>bold</b> text\n\n" + ONE_CALL + "\n<tool_call>\n<function=search>\n<parameter=query>\na<b\n"
                + "</parameter>\n</function>\n</tool_call>";
        List<String> events = new ArrayList<>();
        StringBuilder contentPieces = new StringBuilder();
        QwenToolCallParser p = new QwenToolCallParser(TOOLS, new QwenToolCallParser.Listener() {
            @Override public void onContent(String text) { contentPieces.append(text); }
            @Override public void onToolCallStart(int index, String name) { events.add("start " + index + " " + name); }
            @Override public void onToolCallArguments(int index, String fragment) { events.add("args " + index + " " + fragment); }
        });
        for (int i = 0; i < out.length(); i++) {
            p.push(out.substring(i, i + 1));
        }
        p.finish();
        QwenToolCallParser whole = QwenToolCallParser.parse(out, TOOLS);
        assertEquals(whole.calls(), p.calls());
        assertEquals("Sure <b>bold</b> text", contentPieces.toString());
        assertEquals(List.of("start 0 get_weather", "args 0 {\"city\": \"Paris\"", "args 0 , \"days\": 3", "args 0 }",
                "start 1 search", "args 1 {\"query\": \"a<b\"", "args 1 }"), events);
        for (QwenToolCallParser.ToolCall c : p.calls()) {
            tree(c.arguments()); // every call's arguments parse as JSON
        }
    }

    @Test
    void withoutMarkupEverythingIsContent() {
        String out = "Just an answer, with < and > and <tool but no call.";
        QwenToolCallParser p = QwenToolCallParser.parse(out, TOOLS);
        assertEquals(out, p.content());
        assertTrue(p.calls().isEmpty());
    }
}
