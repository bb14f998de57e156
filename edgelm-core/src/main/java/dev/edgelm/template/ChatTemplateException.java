package dev.edgelm.template;

import dev.edgelm.util.EdgeLmException;

/**
 * A chat template that cannot be parsed or that refuses a conversation. The message names the template and
 * line and quotes the template's own text ({@code raise_exception('...')}) where it raised one.
 */
public final class ChatTemplateException extends EdgeLmException {
    private final String templateMessage;

    ChatTemplateException(String where, String templateMessage, int line) {
        super("chat template" + (where.isEmpty() ? "" : " " + where) + (line > 0 ? " line " + line : "") + ": " + templateMessage);
        this.templateMessage = templateMessage;
    }

    /** The error text alone: for an error the template raised, exactly the template's words. */
    public String templateMessage() {
        return templateMessage;
    }
}
