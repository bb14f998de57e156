package dev.edgelm.jinja;

/**
 * Jinja's default {@code Undefined}: a missing variable, attribute or item. It prints as nothing, is false,
 * iterates as empty and equals only another Undefined; arithmetic, attribute access or calls on it fail with
 * Jinja's message.
 */
final class Undefined {
    private final String message;

    private Undefined(String message) {
        this.message = message;
    }

    /** A variable that is not defined. */
    static Undefined name(String name) {
        return new Undefined(Py.repr(name) + " is undefined");
    }

    /** A missing attribute (or string key) of an object. */
    static Undefined attribute(Object obj, String name) {
        return new Undefined(Py.repr(typeRepr(obj)) + " has no attribute " + Py.repr(name));
    }

    /** A missing item of a sequence or mapping. */
    static Undefined element(Object obj, Object key) {
        return new Undefined(typeRepr(obj) + " has no element " + Py.repr(key));
    }

    /** A value Jinja leaves undefined without naming anything (e.g. {@code x if c} when c is false). */
    static Undefined anonymous() {
        return new Undefined("value is undefined");
    }

    private static String typeRepr(Object obj) {
        if (obj == null) {
            return "None";
        }
        if (obj instanceof Namespace) {
            return "jinja2.utils.Namespace object";
        }
        if (obj instanceof Runtime.LoopContext) {
            return "jinja2.runtime.LoopContext object";
        }
        return Py.typeName(obj) + " object";
    }

    TemplateException error(int line) {
        return new TemplateException(message, line);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Undefined;
    }

    @Override
    public int hashCode() {
        return 0;
    }

    @Override
    public String toString() {
        return "";
    }
}
