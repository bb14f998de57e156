package dev.edgelm.chat.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The parser's streaming property: a reply pushed in pieces, wherever the pieces end, gives the same content and
 * the same calls as the whole reply pushed at once, and the listener hears exactly that. Checked over the
 * tool-call fuzz corpus, hand-written replies and random replies built from pieces of the markup, each split
 * character by character, at every single point, and at random points.
 */
class QwenToolCallParserSplitTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** get_weather(city: string, days: integer), search(query: string, filters: object). */
    private static final Map<String, Set<String>> TOOLS = QwenToolCallParser.stringParameters(List.of(
            Map.of("type", "function", "function", Map.of("name", "get_weather", "parameters", Map.of("type", "object",
                    "properties", Map.of("city", Map.of("type", "string"), "days", Map.of("type", "integer"))))),
            Map.of("type", "function", "function", Map.of("name", "search", "parameters", Map.of("type", "object",
                    "properties", Map.of("query", Map.of("type", "string"), "filters", Map.of("type", "object")))))));

    /**
     * The reply that the {@code toolCalls} fuzz target found (its first byte, which seeded the piece lengths,
     * dropped): a {@code <parameter=} left open before {@code </tool_call>}. Whole, the text up to the next
     * {@code >} was taken as a parameter named {@code </tool_call}; in pieces, the newline in the partial name
     * broke the call.
     */
    static final String FOUND_BY_FUZZING = new String(Base64.getDecoder().decode(
            "U3VyZSA8Yj5ib2xkPC9iPiB0ZXh0Cgo8dG9vbF9jYWxsPgo8ZnVuY3Rpb249Z2V0X3dlYXRoZXI+CjxwYXJhbWV0ZXI9Y2l0eT4KUGFy"
                    + "aXMKPDdwYXJhbWV0ZXI+CjwvZnVuY3Rpb24+CjwvdG9vbF9jYWxsPgo8dG9vbF9jYWxsPgo8ZnVuY3Rpb249c2VhcmNoPgo8cGFy"
                    + "YW1ldGVyPXF1ZXJ5PgphPGIKPC9wYXJhbWV0ZXI+CjwvZnVuY3Rpb24+Y2FsbD4KPHRvb2xfY2FsbD4KPGZ1bmN0aW9uPXNlYXJj"
                    + "aD4KPHBhcmFtZXRlcj0KPC90b29sX2NhbGw+"), StandardCharsets.UTF_8);

    private static final String[] MARKUP = {
        "<tool_call>", "</tool_call>", "<function=get_weather>", "<function=search>", "<function=rm>", "<function=",
        "</function>", "<parameter=city>", "<parameter=days>", "<parameter=query>", "<parameter=filters>",
        "<parameter=", "</parameter>", "<parameter= city >", "\n", "\n", "\n", " ", "  ", "\t", "Paris", "3", "x",
        "{\"year\": 2024}", "[1, 2", "<", ">", "=", "/", "<b>", "</b>", "call>", "<tool", "<func", "</para", "é", "😀",
    };

    /** What one run of the parser produced, as the fuzz target compares it. */
    private record Result(String content, List<QwenToolCallParser.ToolCall> calls) {}

    private static Result run(String text, List<Integer> cuts) throws IOException {
        StringBuilder heardContent = new StringBuilder();
        Map<Integer, StringBuilder> heardArgs = new TreeMap<>();
        List<String> heardNames = new ArrayList<>();
        QwenToolCallParser p = new QwenToolCallParser(TOOLS, new QwenToolCallParser.Listener() {
            @Override
            public void onContent(String t) {
                heardContent.append(t);
            }

            @Override
            public void onToolCallStart(int index, String name) {
                assertEquals(heardNames.size(), index, "calls are numbered in order");
                heardNames.add(name);
                heardArgs.put(index, new StringBuilder());
            }

            @Override
            public void onToolCallArguments(int index, String fragment) {
                heardArgs.get(index).append(fragment);
            }
        });
        int from = 0;
        for (int cut : cuts) {
            p.push(text.substring(from, cut));
            from = cut;
        }
        p.push(text.substring(from));
        p.finish();
        assertEquals(p.content(), heardContent.toString(), "content heard");
        assertEquals(p.calls().size(), heardNames.size(), "calls heard");
        for (int i = 0; i < p.calls().size(); i++) {
            String args = p.calls().get(i).arguments();
            JsonNode tree = JSON.readTree(args);
            assertTrue(tree != null && tree.isObject(), "arguments are not one JSON object: " + args);
            assertEquals(args, heardArgs.get(i).toString(), "arguments heard");
            assertEquals(p.calls().get(i).name(), heardNames.get(i), "name heard");
        }
        return new Result(p.content(), p.calls());
    }

    /** Checks one text against the whole parse: every character apart, every single cut, and random cuts. */
    private static int check(String text, Random random) throws IOException {
        Result whole = run(text, List.of());
        List<Integer> each = new ArrayList<>();
        for (int i = 1; i < text.length(); i++) {
            if (!Character.isLowSurrogate(text.charAt(i))) {
                each.add(i);
            }
        }
        assertEquals(whole, run(text, each), () -> "character by character: " + show(text));
        int checks = 2;
        for (int cut : each) {
            assertEquals(whole, run(text, List.of(cut)), () -> "cut at " + cut + ": " + show(text));
            checks++;
        }
        for (int r = 0; r < 8 && !each.isEmpty(); r++) {
            List<Integer> cuts = new ArrayList<>();
            for (int c : each) {
                if (random.nextInt(4) == 0) {
                    cuts.add(c);
                }
            }
            assertEquals(whole, run(text, cuts), () -> "cuts at " + cuts + ": " + show(text));
            checks++;
        }
        return checks;
    }

    private static String show(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)) + " (Base64)";
    }

    @Test
    void theReplyFoundByFuzzingSplitsLikeTheWhole() throws IOException {
        Result whole = run(FOUND_BY_FUZZING, List.of());
        // The open <parameter= before </tool_call> is broken markup: the second search call keeps no argument
        // named "</tool_call", and the broken markup comes back as content.
        for (QwenToolCallParser.ToolCall c : whole.calls()) {
            assertFalse(c.arguments().contains("tool_call"), c.arguments());
        }
        assertTrue(whole.content().endsWith("<parameter=\n</tool_call>"), whole.content());
        check(FOUND_BY_FUZZING, new Random(1));
    }

    @Test
    void theFuzzCorpusSplitsLikeTheWhole() throws IOException, URISyntaxException {
        Path dir = Path.of(QwenToolCallParserSplitTest.class
                .getResource("/dev/edgelm/fuzz/ServerFormatsFuzzTestInputs/toolCalls").toURI());
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        assertTrue(files.size() >= 10, "the corpus is there: " + files.size());
        Random random = new Random(2);
        for (Path f : files) {
            byte[] data = Files.readAllBytes(f);
            if (data.length > 1) {
                check(new String(data, 1, data.length - 1, StandardCharsets.UTF_8), random);
            }
        }
    }

    @Test
    void randomRepliesOfMarkupPiecesSplitLikeTheWhole() throws IOException {
        Random random = new Random(3);
        int checks = 0;
        for (int n = 0; n < 400; n++) {
            StringBuilder text = new StringBuilder();
            int parts = 1 + random.nextInt(24);
            for (int i = 0; i < parts; i++) {
                String piece = MARKUP[random.nextInt(MARKUP.length)];
                if (random.nextInt(8) == 0 && piece.length() > 1) { // a tag cut short or with a character changed
                    piece = random.nextBoolean() ? piece.substring(0, 1 + random.nextInt(piece.length() - 1))
                            : piece.substring(0, random.nextInt(piece.length())) + "7" + piece.substring(1 + random.nextInt(piece.length() - 1));
                }
                text.append(piece);
            }
            checks += check(text.toString(), random);
        }
        assertTrue(checks > 5_000, "checks " + checks);
    }
}
