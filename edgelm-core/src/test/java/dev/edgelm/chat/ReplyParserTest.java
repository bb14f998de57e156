package dev.edgelm.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.tools.QwenToolCallParser;
import dev.edgelm.template.ChatFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link ChatPrompt} with the stock Qwen3.5 template of the tiny chat fixture, and {@link ReplyParser} on hand-written replies. */
class ReplyParserTest {
    private static final ChatFormat FORMAT = ChatFormat.load(TinyChat.DIR);
    private static final List<Map<String, Object>> TOOLS = List.of(Map.of("type", "function", "function", Map.of(
            "name", "weather", "parameters", Map.of("type", "object", "properties", Map.of(
                    "city", Map.of("type", "string"), "days", Map.of("type", "integer"))))));

    private static ChatPrompt prompt(boolean thinking, List<Map<String, Object>> tools) {
        return ChatPrompt.render(FORMAT.template(), List.of(Map.of("role", "system", "content", TinyChat.SYSTEM),
                Map.of("role", "user", "content", TinyChat.TURN1)), tools, Map.of("enable_thinking", thinking));
    }

    /** What the listener saw, in order. */
    private static List<String> parse(ChatPrompt prompt, List<Map<String, Object>> tools, String... pieces) {
        List<String> events = new ArrayList<>();
        ReplyParser p = new ReplyParser(prompt, tools, new ReplyParser.Listener() {
            @Override
            public void onReasoning(String text) {
                events.add("reasoning:" + text);
            }

            @Override
            public void onContent(String text) {
                events.add("content:" + text);
            }

            @Override
            public void onToolCallStart(int index, String name) {
                events.add("call" + index + ":" + name);
            }

            @Override
            public void onToolCallArguments(int index, String fragment) {
                events.add("args" + index + ":" + fragment);
            }
        });
        for (String piece : pieces) {
            p.push(piece);
        }
        p.finish();
        return events;
    }

    private static String joined(List<String> events, String kind) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(e -> e.startsWith(kind + ":")).forEach(e -> sb.append(e.substring(kind.length() + 1)));
        return sb.toString();
    }

    @Test
    void thePromptIsTheTemplatesRenderingAsTheGoldenHasIt() {
        ChatPrompt p = prompt(false, null);
        assertEquals(TinyChat.text("turn1_prompt"), p.text());
        assertNull(p.forcedCall());
        assertFalse(p.thinkingOpen());
        assertTrue(prompt(true, null).thinkingOpen(), "thinking on: the prompt ends inside <think>");
    }

    @Test
    void forcingACallOpensItAtTheEndUnlessThinkingIsOpen() {
        ChatPrompt p = prompt(false, TOOLS);
        assertEquals(p.rendered() + "<tool_call>\n<function=weather>\n", p.forcingCall("weather").text());
        assertEquals(p.rendered() + "<tool_call>\n<function=", p.forcingCall(null).text());
        assertEquals(p.forcingCall("weather"), p.forcingCallOf(TOOLS), "the only tool is named");
        List<Map<String, Object>> two = List.of(TOOLS.getFirst(), Map.of("type", "function", "function", Map.of("name", "time")));
        assertEquals(p.forcingCall(null), p.forcingCallOf(two));
        ChatPrompt thinking = prompt(true, TOOLS);
        assertEquals(thinking.text(), thinking.forcingCall("weather").text());
    }

    @Test
    void reasoningContentAndACallComeApartWhateverThePieces() {
        String reply = "<think>\nLet me look.\n</think>\n\nChecking.\n<tool_call>\n<function=weather>\n<parameter=city>\nParis\n"
                + "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
        List<String> whole = parse(prompt(false, TOOLS), TOOLS, reply);
        assertEquals("Let me look.", joined(whole, "reasoning"));
        assertEquals("Checking.", joined(whole, "content"));
        assertTrue(whole.contains("call0:weather"), whole.toString());
        assertEquals("{\"city\": \"Paris\", \"days\": 3}", joined(whole, "args0"));
        // one character at a time: the same parts
        List<String> split = parse(prompt(false, TOOLS), TOOLS, reply.split(""));
        assertEquals(joined(whole, "reasoning"), joined(split, "reasoning"));
        assertEquals(joined(whole, "content"), joined(split, "content"));
        assertEquals(joined(whole, "args0"), joined(split, "args0"));
    }

    @Test
    void aForcedCallIsReadAsTheStartOfTheReply() {
        ChatPrompt forced = prompt(false, TOOLS).forcingCall("weather");
        List<String> events = parse(forced, TOOLS, "<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>");
        assertEquals("call0:weather", events.getFirst());
        assertEquals("{\"city\": \"Oslo\"}", joined(events, "args0"));
        assertEquals("", joined(events, "content"));
    }

    @Test
    void withoutToolsTheMarkupIsPlainContent() {
        String reply = "<tool_call>\n<function=weather>\n</function>\n</tool_call>";
        List<String> events = parse(prompt(false, null), null, reply);
        assertEquals(reply, joined(events, "content"));
        assertFalse(events.stream().anyMatch(e -> e.startsWith("call")));
    }

    @Test
    void thinkingOpenInThePromptMakesTheReplyReasoningUntilItCloses() {
        List<String> events = parse(prompt(true, null), null, "hmm", "\n</think>\n\nParis");
        assertEquals("hmm", joined(events, "reasoning"));
        assertEquals("Paris", joined(events, "content"));
        assertEquals(List.of(), new ReplyParser(prompt(false, null), (List<Map<String, Object>>) null,
                new ReplyParser.Listener() {}).toolCalls());
        assertEquals(List.of(new QwenToolCallParser.ToolCall("weather", "{\"city\": \"Rome\"}")), parseCalls());
    }

    private static List<QwenToolCallParser.ToolCall> parseCalls() {
        ReplyParser p = new ReplyParser(prompt(false, TOOLS), TOOLS, new ReplyParser.Listener() {});
        p.push("<tool_call>\n<function=weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>");
        p.finish();
        return p.toolCalls();
    }
}
