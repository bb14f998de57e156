package dev.edgelm.jinja;

/**
 * A template that cannot be parsed or that fails while rendering, including the template's own
 * {@code raise_exception(...)}: the message is the template's text or a description of what went wrong, with
 * the line where it happened.
 */
public class TemplateException extends RuntimeException {
    private final int line;

    TemplateException(String message, int line) {
        super(message);
        this.line = line;
    }

    /** The template line (1-based) where the error happened, or 0 when unknown. */
    public int line() {
        return line;
    }
}
