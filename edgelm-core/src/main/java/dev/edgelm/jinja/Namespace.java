package dev.edgelm.jinja;

import java.util.LinkedHashMap;
import java.util.Map;

/** Jinja's {@code namespace(...)}: an object whose attributes can be assigned from inside loops. */
final class Namespace {
    final Map<String, Object> attributes = new LinkedHashMap<>();

    @Override
    public String toString() {
        return "<Namespace " + attributes + ">";
    }
}
