package dev.edgelm.chat;

import dev.edgelm.chat.tools.QwenToolCallParser;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a chat reply's text, as it is generated, into its parts: reasoning (inside {@code <think>...</think>},
 * {@link ThinkingSplitter}), answer content, and, when the request declared tools, tool calls
 * ({@link QwenToolCallParser}). Push the text pieces in order, then {@link #finish()}; the listener is called on
 * the pushing thread.
 */
public final class ReplyParser {

    /** Receives the parts of the reply. */
    public interface Listener extends QwenToolCallParser.Listener {
        /** Text of the model's reasoning. */
        default void onReasoning(String text) {}
    }

    private final ThinkingSplitter splitter;
    private final QwenToolCallParser tools;

    /**
     * @param prompt the prompt the reply continues (whether it opened thinking or a tool call)
     * @param tools  the request's tool definitions in OpenAI's shape whose calls are parsed out of the answer, or
     *               null to take the answer as plain content
     */
    public ReplyParser(ChatPrompt prompt, List<? extends Map<String, ?>> tools, Listener listener) {
        this(prompt, tools == null ? null : QwenToolCallParser.stringParameters(tools), listener);
    }

    /** As above, with the declared functions' string parameters ({@link QwenToolCallParser#stringParameters}). */
    public ReplyParser(ChatPrompt prompt, Map<String, Set<String>> toolStringParameters, Listener listener) {
        this.tools = toolStringParameters == null ? null : new QwenToolCallParser(toolStringParameters, listener);
        this.splitter = new ThinkingSplitter(prompt.thinkingOpen(), new ChatListener() {
            @Override
            public void onThinking(String text) {
                listener.onReasoning(text);
            }

            @Override
            public void onAnswer(String text) {
                if (tools != null) {
                    tools.push(text);
                } else {
                    listener.onContent(text);
                }
            }
        });
        if (tools != null && prompt.forcedCall() != null) {
            tools.push(prompt.forcedCall()); // the call the prompt already opened is part of the reply
        }
    }

    /** The next piece of the reply's text. */
    public void push(String piece) {
        splitter.push(piece);
    }

    /** The reply ended: text held back (a possible tag start) is passed on and an open tool call is closed. */
    public void finish() {
        splitter.finish();
        if (tools != null) {
            tools.finish();
        }
    }

    /** The tool calls parsed so far (empty without tools). */
    public List<QwenToolCallParser.ToolCall> toolCalls() {
        return tools == null ? List.of() : tools.calls();
    }
}
