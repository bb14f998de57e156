package dev.edgelm.jinja;

import java.util.List;
import java.util.Map;

/**
 * The budget of one render under its {@link Limits}: the steps spent, the evaluation depth, and the checks on the
 * size of what the template builds. The render in progress on this thread is reachable from the value helpers
 * ({@link Py#repr}, {@link Py#toJson}) that build strings without a runtime at hand.
 */
final class Sandbox {
    private static final ThreadLocal<Sandbox> CURRENT = new ThreadLocal<>();
    /** Outside a render (a value printed by Java code), the defaults still bound what is built. */
    private static final Limits OUTSIDE = Limits.DEFAULT;

    final Limits limits;
    private final Runtime rt;
    private long steps;
    private int depth;

    Sandbox(Limits limits, Runtime rt) {
        this.limits = limits;
        this.rt = rt;
    }

    /** Makes this the budget of the thread's render; returns the one it replaces, for {@link #leave}. */
    Sandbox enter() {
        Sandbox previous = CURRENT.get();
        CURRENT.set(this);
        return previous;
    }

    static void leave(Sandbox previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }

    private int line() {
        return rt == null ? 0 : rt.line;
    }

    void step() {
        if (++steps > limits.maxSteps()) {
            throw new TemplateException("the template ran more than " + limits.maxSteps()
                    + " steps (loop iterations, statements and expressions; the sandbox's limit)", line());
        }
    }

    /** Charges the work of producing {@code n} characters or items: one step per 64. */
    void work(long n) {
        steps += n >> 6;
        step();
    }

    void deeper() {
        if (++depth > limits.maxRecursion()) {
            throw new TemplateException("maximum recursion depth exceeded: the template recursed deeper than " + limits.maxRecursion()
                    + " levels while rendering (a recursive macro or a very long chain of operators)", line());
        }
    }

    void shallower() {
        depth--;
    }

    /** Refuses a string of {@code length} characters before or after it is built. */
    void chars(long length) {
        if (length > limits.maxChars()) {
            throw new TemplateException("the template built a string of " + length + " characters, more than the "
                    + limits.maxChars() + " the sandbox allows", line());
        }
    }

    void output(int length) {
        if (length > limits.maxChars()) {
            throw new TemplateException("the template's output grew past " + limits.maxChars()
                    + " characters (the sandbox's limit)", line());
        }
    }

    /** Refuses a list or dict of {@code n} items before or after it is built. */
    void items(long n) {
        if (n > limits.maxItems()) {
            throw new TemplateException("the template built a list or dict of " + n + " items, more than the "
                    + limits.maxItems() + " the sandbox allows", line());
        }
    }

    /** Checks and charges a value an operation produced. */
    Object produced(Object v) {
        if (v instanceof String s) {
            chars(s.length());
            work(s.length());
        } else if (v instanceof List<?> l) {
            items(l.size());
            work(l.size());
        } else if (v instanceof Map<?, ?> m) {
            items(m.size());
            work(m.size());
        }
        return v;
    }

    /** The budget of the render on this thread, or one with the default limits outside a render. */
    static Sandbox current() {
        Sandbox s = CURRENT.get();
        return s != null ? s : new Sandbox(OUTSIDE, null);
    }

    /** For string builders of value helpers: refuses {@code sb} once it is over the character limit. */
    static void check(StringBuilder sb) {
        Sandbox s = CURRENT.get();
        int max = s != null ? s.limits.maxChars() : OUTSIDE.maxChars();
        if (sb.length() > max) {
            (s != null ? s : new Sandbox(OUTSIDE, null)).chars(sb.length());
        }
    }
}
