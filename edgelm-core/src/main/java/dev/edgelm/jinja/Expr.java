package dev.edgelm.jinja;

import java.util.List;

/** Expressions of the template language. */
sealed interface Expr {
    record Literal(Object value) implements Expr {}

    record Name(String name) implements Expr {}

    record ListLiteral(List<Expr> items) implements Expr {}

    record TupleLiteral(List<Expr> items) implements Expr {}

    record DictLiteral(List<Expr> keys, List<Expr> values) implements Expr {}

    record GetAttr(Expr object, String name) implements Expr {}

    record GetItem(Expr object, Expr key) implements Expr {}

    record Slice(Expr object, Expr start, Expr stop, Expr step) implements Expr {}

    record Call(Expr function, Args args) implements Expr {}

    record Filter(Expr input, String name, Args args) implements Expr {}

    record Test(Expr input, String name, Args args, boolean negated) implements Expr {}

    record Unary(String op, Expr operand) implements Expr {}

    record Binary(String op, Expr left, Expr right) implements Expr {}

    record Compare(Expr first, List<String> ops, List<Expr> rest) implements Expr {}

    record Conditional(Expr condition, Expr then, Expr otherwise) implements Expr {}

    /** Call arguments: positional, then keyword. */
    record Args(List<Expr> positional, List<String> names, List<Expr> named) {
        static final Args NONE = new Args(List.of(), List.of(), List.of());
    }
}
