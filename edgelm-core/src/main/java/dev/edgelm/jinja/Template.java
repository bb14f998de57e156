package dev.edgelm.jinja;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Jinja2 template, parsed once and rendered with Python's semantics in the configuration Hugging Face's
 * {@code apply_chat_template} uses: {@code trim_blocks} and {@code lstrip_blocks} on, loop controls
 * ({@code break}, {@code continue}), the default (lenient) undefined, no autoescaping, immutable data (list and
 * dict methods that modify are refused), {@code tojson} as {@code json.dumps(ensure_ascii=False)}, and the
 * globals {@code raise_exception}, {@code strftime_now}, {@code namespace}, {@code range} and {@code dict}.
 *
 * <p>Values passed in are plain Java: null, Boolean, Integer/Long, Float/Double, String, List, Map (iteration
 * order kept); other numbers are widened. Not every Jinja feature is here (no {@code include}, {@code extends},
 * {@code call} blocks, recursive loops); what a template uses that is missing is reported as a syntax error.
 */
public final class Template {
    private final List<Node> body;
    private final Limits limits;

    private Template(List<Node> body, Limits limits) {
        this.body = body;
        this.limits = limits;
    }

    /**
     * Parses a template under {@link Limits#fromSystemProperties()} (the default limits unless overridden);
     * throws {@link TemplateException} with the line of the first syntax error.
     */
    public static Template parse(String source) {
        return parse(source, Limits.fromSystemProperties());
    }

    /** Parses a template that will also render under {@code limits}. */
    public static Template parse(String source, Limits limits) {
        return new Template(Parser.parse(Lexer.lex(source), limits), limits);
    }

    /** The limits this template renders under. */
    public Limits limits() {
        return limits;
    }

    /**
     * Renders with the given variables; throws {@link TemplateException} on a template error, including a
     * crossed {@link Limits limit}.
     */
    public String render(Map<String, ?> variables) {
        Map<String, Object> globals = new LinkedHashMap<>();
        for (Map.Entry<String, ?> e : variables.entrySet()) {
            globals.put(e.getKey(), Runtime.fromJava(e.getValue()));
        }
        return new Runtime(globals, limits).render(body);
    }
}
