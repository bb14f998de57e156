package dev.edgelm.jinja;

/**
 * The bounds a template is parsed and rendered under, in the spirit of Jinja2's sandbox: chat templates come from
 * strangers (inside downloaded GGUF files and checkpoints), so a template must not be able to exhaust memory, loop
 * forever or overflow the stack. Each bound, when crossed, ends the render with a {@link TemplateException} that
 * names it. The defaults are far above what real chat templates need over long conversations (they render in
 * thousands of steps, nest a few levels, and write what the conversation holds).
 *
 * @param maxChars     characters of the rendered text, and of any string a template builds ({@code 'a' * n},
 *                     {@code ~}, {@code join}, {@code replace}, {@code tojson}, ...)
 * @param maxItems     items of any list or dict a template builds ({@code [x] * n}, {@code +}, filters);
 *                     {@code range()} is capped separately at 100000 items, as Jinja2's sandbox caps it
 * @param maxSteps     units of work: one per statement executed, per expression evaluated and per loop iteration,
 *                     plus one per 64 characters or items an operation produces (two nested {@code range(100000)}
 *                     loops end here)
 * @param maxNesting   levels of blocks and parenthesised or prefix-operator expressions the parser accepts (CPython's
 *                     own parser stops at 200 nested parentheses)
 * @param maxRecursion levels of evaluation while rendering: nested expressions, statements and macro calls
 *                     (Python stops at a recursion depth of 1000)
 */
public record Limits(int maxChars, int maxItems, long maxSteps, int maxNesting, int maxRecursion) {
    /** The defaults: 16 Mi characters, 1 Mi items, 10 million steps, nesting 200, recursion 1000. */
    public static final Limits DEFAULT = new Limits(16 << 20, 1 << 20, 10_000_000L, 200, 1000);

    /** The system properties that override {@link #DEFAULT} in {@link #fromSystemProperties()}. */
    public static final String PROPERTY_PREFIX = "edgelm.template.";

    public Limits {
        if (maxChars <= 0 || maxItems <= 0 || maxSteps <= 0 || maxNesting <= 0 || maxRecursion <= 0) {
            throw new IllegalArgumentException("template limits must be positive: " + this);
        }
    }

    /**
     * {@link #DEFAULT}, with any of the system properties {@code edgelm.template.maxChars}, {@code .maxItems},
     * {@code .maxSteps}, {@code .maxNesting}, {@code .maxRecursion} in its place (e.g.
     * {@code EDGELM_JAVA_OPTS=-Dedgelm.template.maxSteps=1000000000}). A property that is not a positive integer
     * is a {@link TemplateException} naming it.
     */
    public static Limits fromSystemProperties() {
        return new Limits(
                (int) property("maxChars", DEFAULT.maxChars, Integer.MAX_VALUE),
                (int) property("maxItems", DEFAULT.maxItems, Integer.MAX_VALUE),
                property("maxSteps", DEFAULT.maxSteps, Long.MAX_VALUE),
                (int) property("maxNesting", DEFAULT.maxNesting, Integer.MAX_VALUE),
                (int) property("maxRecursion", DEFAULT.maxRecursion, Integer.MAX_VALUE));
    }

    private static long property(String name, long fallback, long max) {
        String v = System.getProperty(PROPERTY_PREFIX + name);
        if (v == null) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.strip());
            if (n > 0 && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new TemplateException("system property " + PROPERTY_PREFIX + name + " = '" + v
                + "' is not a positive integer up to " + max, 0);
    }

    public Limits withMaxChars(int n) {
        return new Limits(n, maxItems, maxSteps, maxNesting, maxRecursion);
    }

    public Limits withMaxItems(int n) {
        return new Limits(maxChars, n, maxSteps, maxNesting, maxRecursion);
    }

    public Limits withMaxSteps(long n) {
        return new Limits(maxChars, maxItems, n, maxNesting, maxRecursion);
    }

    public Limits withMaxNesting(int n) {
        return new Limits(maxChars, maxItems, maxSteps, n, maxRecursion);
    }

    public Limits withMaxRecursion(int n) {
        return new Limits(maxChars, maxItems, maxSteps, maxNesting, n);
    }
}
