package dev.edgelm.server;

import dev.edgelm.chat.tools.QwenToolCallParser;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.template.ChatTemplateException;

/**
 * What the server does with a {@code /v1/chat/completions} body before it generates, for the fuzz targets
 * (which live outside this package): the strict JSON read, {@link ChatRequest#parse}, the tool declarations
 * the reply parser takes, and the prompt as {@code /apply-template} renders it.
 */
public final class ChatRequestFuzzing {
    private ChatRequestFuzzing() {}

    /** Parses and renders {@code body} as the server would, or throws the server's {@link ApiException}. */
    public static String prompt(byte[] body, ChatFormat format) {
        ChatRequest r = ChatRequest.parse(new Json(ServerOptions.DEFAULT_MAX_BODY_BYTES).parseObject(body),
                ServerOptions.DEFAULT_MAX_MESSAGES);
        if (r.parsesToolCalls()) {
            QwenToolCallParser.stringParameters(r.tools());
        }
        try {
            return format.template().render(r.messages(), r.parsesToolCalls() ? r.tools() : null, true, r.templateKwargs());
        } catch (ChatTemplateException e) {
            throw ApiException.invalid("messages", "the chat template cannot render these messages: " + e.getMessage());
        }
    }
}
