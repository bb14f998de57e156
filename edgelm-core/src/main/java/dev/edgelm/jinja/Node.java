package dev.edgelm.jinja;

import java.util.List;

/** The syntax tree of a template: statements ({@link Node}) and expressions ({@link Expr}). */
sealed interface Node {
    record Text(String text) implements Node {}

    record Output(Expr expr, int line) implements Node {}

    record If(List<Expr> conditions, List<List<Node>> bodies, List<Node> otherwise, int line) implements Node {}

    record For(Target target, Expr iterable, Expr filter, List<Node> body, List<Node> otherwise, int line) implements Node {}

    record Set(Target target, Expr value, int line) implements Node {}

    record SetBlock(Target target, List<Node> body, int line) implements Node {}

    record Macro(String name, List<String> params, List<Expr> defaults, List<Node> body, int line) implements Node {}

    /** {@code {% filter f | g(x) %}body{% endfilter %}}: the filters applied to the rendered body, named {@link #BODY}. */
    record FilterBlock(Expr filters, List<Node> body, int line) implements Node {
        static final String BODY = "\0filter body";
    }

    record Break(int line) implements Node {}

    record Continue(int line) implements Node {}

    /** An assignment target: a name, a tuple of names, or an attribute of a namespace. */
    sealed interface Target {
        record Name(String name) implements Target {}

        record Tuple(List<String> names) implements Target {}

        record Attribute(String object, String attribute) implements Target {}
    }
}
