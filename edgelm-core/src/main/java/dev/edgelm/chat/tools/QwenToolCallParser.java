package dev.edgelm.chat.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parses, incrementally, the tool calls of Qwen3.5's stock chat template out of a reply's answer text:
 *
 * <pre>
 * &lt;tool_call&gt;
 * &lt;function=get_weather&gt;
 * &lt;parameter=city&gt;
 * Paris
 * &lt;/parameter&gt;
 * &lt;/function&gt;
 * &lt;/tool_call&gt;
 * </pre>
 *
 * The rules follow llama.cpp's parser for this format: a call starts at {@code <tool_call>} or directly at
 * {@code <function=NAME>} of a declared tool; each parameter's value is the text between
 * {@code <parameter=KEY>\n} and {@code \n</parameter>} (the newlines belong to the delimiters); a parameter
 * whose schema type is {@code string} is taken raw, any other as JSON, and as a raw string when it is not
 * valid JSON; parameters come in any order; several calls may follow one another. The arguments are built
 * as one JSON object text, streamed a parameter at a time.
 *
 * <p>It fails soft: markup that does not parse (an undeclared function, garbage after {@code <tool_call>})
 * is passed on as plain content; a call already under way when its markup breaks is closed with the
 * arguments read so far and the rest goes on as content. It never throws on model output.
 */
public final class QwenToolCallParser {
    private static final String TOOL_CALL = "<tool_call>";
    private static final String TOOL_CALL_END = "</tool_call>";
    private static final String FUNCTION = "<function=";
    private static final String FUNCTION_END = "</function>";
    private static final String PARAMETER = "<parameter=";
    private static final String PARAMETER_END = "</parameter>";
    private static final int MAX_NAME = 256;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Receives the parsed reply as it is pushed. */
    public interface Listener {
        Listener NONE = new Listener() {};

        /** Plain text of the answer (outside tool calls). */
        default void onContent(String text) {}

        /** A tool call begins: its position among this reply's calls and the function's name. */
        default void onToolCallStart(int index, String name) {}

        /** The next piece of the call's arguments, a JSON object text when all pieces are joined. */
        default void onToolCallArguments(int index, String fragment) {}
    }

    /** A parsed call: the function's name and its arguments as a JSON object text. */
    public record ToolCall(String name, String arguments) {}

    private enum State { TEXT, AFTER_OPEN, FUNCTION_NAME, IN_FUNCTION, PARAMETER_NAME, VALUE, AFTER_FUNCTION }

    private final Map<String, Set<String>> stringParameters;
    private final Listener listener;
    private final StringBuilder buf = new StringBuilder();
    /** Markup consumed since the current call started and not yet committed (passed on as content on failure). */
    private final StringBuilder raw = new StringBuilder();
    /** Whitespace at the end of the content so far: dropped before a tool call, emitted before more content. */
    private final StringBuilder pendingSpace = new StringBuilder();
    private final StringBuilder content = new StringBuilder();
    private final List<String> names = new ArrayList<>();
    private final List<StringBuilder> arguments = new ArrayList<>();
    private State state = State.TEXT;
    private String function;
    private String parameter;
    private int parametersInCall;
    private boolean finished;

    /**
     * @param stringParameters per declared function name, the names of its parameters whose type is
     *                         {@code string} (see {@link #stringParameters(List)})
     */
    public QwenToolCallParser(Map<String, Set<String>> stringParameters, Listener listener) {
        this.stringParameters = Map.copyOf(stringParameters);
        this.listener = listener;
    }

    /**
     * The declared functions and their string-typed parameters, from tool definitions in OpenAI's shape
     * ({@code [{"type": "function", "function": {"name": ..., "parameters": {"properties": {...}}}}]}, as
     * plain maps and lists). Entries that are not functions are skipped.
     */
    public static Map<String, Set<String>> stringParameters(List<?> tools) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        for (Object t : tools) {
            if (!(t instanceof Map<?, ?> tool) || !(tool.get("function") instanceof Map<?, ?> fn)
                    || !(fn.get("name") instanceof String name)) {
                continue;
            }
            Set<String> strings = new LinkedHashSet<>();
            if (fn.get("parameters") instanceof Map<?, ?> params && params.get("properties") instanceof Map<?, ?> props) {
                for (Map.Entry<?, ?> p : props.entrySet()) {
                    if (p.getValue() instanceof Map<?, ?> schema && "string".equals(schema.get("type"))) {
                        strings.add(String.valueOf(p.getKey()));
                    }
                }
            }
            out.put(name, strings);
        }
        return out;
    }

    /** Parses a whole answer at once. */
    public static QwenToolCallParser parse(String answer, Map<String, Set<String>> stringParameters) {
        QwenToolCallParser p = new QwenToolCallParser(stringParameters, Listener.NONE);
        p.push(answer);
        p.finish();
        return p;
    }

    /** Feeds the next piece of answer text. */
    public void push(String piece) {
        if (finished) {
            throw new IllegalStateException("push after finish");
        }
        buf.append(piece);
        while (step()) {
            // each step consumes input or changes state
        }
    }

    /** Ends the answer: held-back text is passed on, and a call still open is closed. */
    public void finish() {
        if (finished) {
            return;
        }
        finished = true;
        switch (state) {
            case TEXT -> text(buf.toString());
            case AFTER_OPEN, FUNCTION_NAME -> text(raw + buf.toString());
            case VALUE -> {
                endParameter(buf.toString());
                closeCall();
            }
            case PARAMETER_NAME -> {
                closeCall();
                text(raw + buf.toString());
            }
            case IN_FUNCTION -> {
                closeCall();
                text(buf.toString());
            }
            case AFTER_FUNCTION -> text(buf.toString());
        }
        buf.setLength(0);
        if (!pendingSpace.isEmpty() && names.isEmpty()) { // whitespace after a call is not content
            emitContent(pendingSpace.toString());
            pendingSpace.setLength(0);
        }
    }

    /** The content (answer text outside tool calls) so far. */
    public String content() {
        return content.toString();
    }

    /** The calls parsed so far; the last one's arguments are complete only once it is closed. */
    public List<ToolCall> calls() {
        List<ToolCall> out = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            out.add(new ToolCall(names.get(i), arguments.get(i).toString()));
        }
        return out;
    }

    /** One parsing step; false when more input is needed. */
    private boolean step() {
        switch (state) {
            case TEXT -> {
                int call = buf.indexOf(TOOL_CALL);
                int fn = buf.indexOf(FUNCTION);
                int at = call < 0 ? fn : fn < 0 ? call : Math.min(call, fn);
                if (at < 0) {
                    int keep = Math.max(partialSuffix(buf, TOOL_CALL), partialSuffix(buf, FUNCTION));
                    text(buf.substring(0, buf.length() - keep));
                    buf.delete(0, buf.length() - keep);
                    return false;
                }
                text(buf.substring(0, at));
                buf.delete(0, at);
                raw.setLength(0);
                if (at == call) {
                    consume(TOOL_CALL.length());
                    state = State.AFTER_OPEN;
                } else {
                    consume(FUNCTION.length());
                    state = State.FUNCTION_NAME;
                }
                return true;
            }
            case AFTER_OPEN -> {
                skipWhitespace();
                if (startsWith(FUNCTION)) {
                    consume(FUNCTION.length());
                    state = State.FUNCTION_NAME;
                    return true;
                }
                if (isPrefixOf(FUNCTION)) {
                    return false;
                }
                return failUncommitted();
            }
            case FUNCTION_NAME -> {
                int end = buf.indexOf(">");
                if (end < 0) {
                    return buf.length() > MAX_NAME || hasWhitespace(buf, buf.length()) ? failUncommitted() : false;
                }
                String name = buf.substring(0, end);
                if (name.isEmpty() || name.length() > MAX_NAME || hasWhitespace(name, name.length())
                        || !stringParameters.containsKey(name)) {
                    return failUncommitted();
                }
                buf.delete(0, end + 1);
                raw.setLength(0);
                function = name;
                parametersInCall = 0;
                names.add(name);
                arguments.add(new StringBuilder());
                pendingSpace.setLength(0); // whitespace before a call belongs to the markup
                listener.onToolCallStart(names.size() - 1, name);
                state = State.IN_FUNCTION;
                return true;
            }
            case IN_FUNCTION -> {
                skipWhitespace();
                if (startsWith(PARAMETER)) {
                    raw.setLength(0);
                    consume(PARAMETER.length());
                    state = State.PARAMETER_NAME;
                    return true;
                }
                if (startsWith(PARAMETER_END)) { // a duplicated closing tag: skip it
                    buf.delete(0, PARAMETER_END.length());
                    return true;
                }
                if (startsWith(FUNCTION_END)) {
                    buf.delete(0, FUNCTION_END.length());
                    closeCall();
                    state = State.AFTER_FUNCTION;
                    return true;
                }
                if (startsWith(TOOL_CALL_END)) {
                    buf.delete(0, TOOL_CALL_END.length());
                    closeCall();
                    state = State.TEXT;
                    return true;
                }
                if (buf.isEmpty() || isPrefixOf(PARAMETER) || isPrefixOf(PARAMETER_END) || isPrefixOf(FUNCTION_END)
                        || isPrefixOf(TOOL_CALL_END)) {
                    return false;
                }
                closeCall(); // broken markup inside a call: keep what was read, the rest is content
                state = State.TEXT;
                return true;
            }
            case PARAMETER_NAME -> {
                int end = buf.indexOf(">");
                if (end < 0) {
                    if (buf.length() > MAX_NAME || buf.indexOf("\n") >= 0) {
                        closeCall();
                        buf.insert(0, raw);
                        raw.setLength(0);
                        state = State.TEXT;
                        return true;
                    }
                    return false;
                }
                // The same tests as on a partial name above (length and newline on the text as written, before
                // stripping), so that a reply pushed in pieces breaks where the whole reply breaks.
                String written = buf.substring(0, end);
                String name = written.strip();
                if (name.isEmpty() || written.length() > MAX_NAME || written.indexOf('\n') >= 0) {
                    closeCall();
                    buf.insert(0, raw);
                    raw.setLength(0);
                    state = State.TEXT;
                    return true;
                }
                buf.delete(0, end + 1);
                raw.setLength(0);
                parameter = name;
                state = State.VALUE;
                return true;
            }
            case VALUE -> {
                int end = firstOf(buf, PARAMETER_END, PARAMETER, FUNCTION_END, TOOL_CALL_END);
                if (end < 0) {
                    return false;
                }
                endParameter(buf.substring(0, end));
                buf.delete(0, end);
                if (startsWith(PARAMETER_END)) {
                    buf.delete(0, PARAMETER_END.length());
                }
                state = State.IN_FUNCTION;
                return true;
            }
            case AFTER_FUNCTION -> {
                skipWhitespace();
                if (startsWith(TOOL_CALL_END)) {
                    buf.delete(0, TOOL_CALL_END.length());
                    state = State.TEXT;
                    return true;
                }
                if (buf.isEmpty() || isPrefixOf(TOOL_CALL_END)) {
                    return false;
                }
                state = State.TEXT;
                return true;
            }
        }
        return false;
    }

    /** The value text of the current parameter is complete: add it to the arguments. */
    private void endParameter(String value) {
        if (value.startsWith("\n")) {
            value = value.substring(1);
        }
        if (value.endsWith("\n")) {
            value = value.substring(0, value.length() - 1);
        }
        String json;
        if (stringParameters.getOrDefault(function, Set.of()).contains(parameter)) {
            json = quote(value);
        } else {
            json = asJson(value.strip());
            if (json == null) {
                json = quote(value);
            }
        }
        String fragment = (parametersInCall == 0 ? "{" : ", ") + quote(parameter) + ": " + json;
        parametersInCall++;
        argumentsFragment(fragment);
    }

    private void closeCall() {
        if (function == null) {
            return;
        }
        argumentsFragment(parametersInCall == 0 ? "{}" : "}");
        function = null;
        parameter = null;
    }

    private void argumentsFragment(String fragment) {
        int index = names.size() - 1;
        arguments.get(index).append(fragment);
        listener.onToolCallArguments(index, fragment);
    }

    /** A call that has not produced a tool call yet broke: what it consumed is content after all. */
    private boolean failUncommitted() {
        String consumed = raw.toString();
        raw.setLength(0);
        state = State.TEXT;
        text(consumed);
        return true;
    }

    /** Content, with trailing whitespace held back (a tool call may follow it). */
    private void text(String s) {
        if (s.isEmpty()) {
            return;
        }
        int end = s.length();
        while (end > 0 && Character.isWhitespace(s.charAt(end - 1))) {
            end--;
        }
        if (end == 0) {
            pendingSpace.append(s);
            return;
        }
        emitContent(pendingSpace + s.substring(0, end));
        pendingSpace.setLength(0);
        pendingSpace.append(s, end, s.length());
    }

    private void emitContent(String s) {
        if (!s.isEmpty()) {
            content.append(s);
            listener.onContent(s);
        }
    }

    private void consume(int n) {
        raw.append(buf, 0, n);
        buf.delete(0, n);
    }

    private void skipWhitespace() {
        int i = 0;
        while (i < buf.length() && Character.isWhitespace(buf.charAt(i))) {
            i++;
        }
        consume(i);
    }

    private boolean startsWith(String tag) {
        return buf.length() >= tag.length() && buf.substring(0, tag.length()).equals(tag);
    }

    /** The buffer so far is a proper start of {@code tag}. */
    private boolean isPrefixOf(String tag) {
        return buf.length() < tag.length() && tag.startsWith(buf.toString());
    }

    private static String asJson(String text) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            JsonNode node = JSON.readTree(text);
            return node == null || node.isMissingNode() ? null : JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean hasWhitespace(CharSequence s, int n) {
        for (int i = 0; i < n; i++) {
            if (Character.isWhitespace(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    private static int firstOf(StringBuilder s, String... tags) {
        int best = -1;
        for (String t : tags) {
            int at = s.indexOf(t);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
            }
        }
        return best;
    }

    /** Length of the longest end of {@code text} that is a proper start of {@code tag}. */
    private static int partialSuffix(CharSequence text, String tag) {
        for (int n = Math.min(tag.length() - 1, text.length()); n > 0; n--) {
            boolean match = true;
            for (int i = 0; i < n && match; i++) {
                match = text.charAt(text.length() - n + i) == tag.charAt(i);
            }
            if (match) {
                return n;
            }
        }
        return 0;
    }
}
