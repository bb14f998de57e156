package dev.edgelm.chat;

import dev.edgelm.template.ChatTemplate;
import java.util.List;
import java.util.Map;

/**
 * A chat request as the model reads it: the chat template's rendering of the messages and tools (OpenAI /
 * Hugging Face shape, as plain maps and lists) ending with the opening of the assistant's turn, and, when the
 * reply must be a tool call, the opening of that call. Qwen3.5's stock template asks for calls as
 * {@code <tool_call>\n<function=NAME>\n...}: writing that opening into the prompt makes the reply a call without a
 * grammar. Both the HTTP server and in-process adapters build their prompts here.
 *
 * @param rendered     the template's output
 * @param forcedCall   the opening of a tool call appended to it, or null; it is also the start of the reply, so
 *                     the reply's parser reads it first ({@link ReplyParser})
 * @param thinkingOpen whether the prompt ends inside an open {@code <think>} block (thinking on)
 */
public record ChatPrompt(String rendered, String forcedCall, boolean thinkingOpen) {
    private static final String TOOL_CALL_OPEN = "<tool_call>\n<function=";

    /**
     * Renders {@code messages} with {@code tools} (null or empty for none) and the template's extra arguments
     * (such as {@code enable_thinking}); a template error is a {@code ChatTemplateException}.
     */
    public static ChatPrompt render(ChatTemplate template, List<? extends Map<String, ?>> messages,
                                    List<? extends Map<String, ?>> tools, Map<String, ?> kwargs) {
        String prompt = template.render(messages, tools == null || tools.isEmpty() ? null : tools, true, kwargs);
        boolean thinkingOpen = prompt.lastIndexOf(ThinkingSplitter.OPEN) > prompt.lastIndexOf(ThinkingSplitter.CLOSE);
        return new ChatPrompt(prompt, null, thinkingOpen);
    }

    /**
     * This prompt with a tool call opened at its end: a call of {@code function}, or, when it is null, of any
     * declared function (the model writes the name). While thinking is open the call cannot be opened (the
     * reply starts with the thinking): the prompt stays as it is.
     */
    public ChatPrompt forcingCall(String function) {
        if (thinkingOpen) {
            return this;
        }
        return new ChatPrompt(rendered, function == null ? TOOL_CALL_OPEN : TOOL_CALL_OPEN + function + ">\n", false);
    }

    /**
     * This prompt with a call of one of {@code tools} (OpenAI's function shape) opened at its end: when there is
     * only one, the call names it (a required call of the only tool is a call of that tool), else the model writes
     * the name.
     */
    public ChatPrompt forcingCallOf(List<? extends Map<String, ?>> tools) {
        String only = null;
        if (tools.size() == 1 && tools.getFirst().get("function") instanceof Map<?, ?> fn && fn.get("name") instanceof String name) {
            only = name;
        }
        return forcingCall(only);
    }

    /** The text to encode: the rendering and the forced call's opening, if any. */
    public String text() {
        return forcedCall == null ? rendered : rendered + forcedCall;
    }
}
