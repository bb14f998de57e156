package dev.edgelm.grammar;

import java.util.Arrays;
import java.util.List;

/**
 * The right-hand side of a grammar rule, as GBNF writes it: literals, character classes, references to
 * rules, sequences, alternatives and bounded or unbounded repetition. Characters are Unicode code points;
 * the matcher reads them from UTF-8 bytes.
 */
public sealed interface Expr {

    /** A literal string (its code points in order). */
    record Literal(String text) implements Expr {}

    /**
     * A character class: inclusive code-point ranges {@code [lo0, hi0, lo1, hi1, ...]}, negated for
     * {@code [^...]}; {@code .} is the negated empty class.
     */
    record CharClass(int[] ranges, boolean negated) implements Expr {
        public CharClass {
            if (ranges.length % 2 != 0) {
                throw new IllegalArgumentException("ranges come in pairs");
            }
            ranges = ranges.clone();
        }

        public static CharClass of(int lo, int hi) {
            return new CharClass(new int[] {lo, hi}, false);
        }

        public boolean matches(int cp) {
            boolean in = false;
            for (int i = 0; i < ranges.length && !in; i += 2) {
                in = cp >= ranges[i] && cp <= ranges[i + 1];
            }
            return in != negated;
        }

        /** Whether some code point in {@code [lo, hi]} matches. */
        public boolean matchesSome(int lo, int hi) {
            if (!negated) {
                for (int i = 0; i < ranges.length; i += 2) {
                    if (ranges[i] <= hi && ranges[i + 1] >= lo) {
                        return true;
                    }
                }
                return false;
            }
            // negated: some code point of [lo, hi] lies outside every range
            int[] sorted = sortedRanges();
            int next = lo;
            for (int i = 0; i < sorted.length; i += 2) {
                if (sorted[i] > next) {
                    return next <= hi;
                }
                next = Math.max(next, sorted[i + 1] + 1);
                if (next > hi) {
                    return false;
                }
            }
            return next <= hi;
        }

        private int[] sortedRanges() {
            Integer[] order = new Integer[ranges.length / 2];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Integer.compare(ranges[2 * a], ranges[2 * b]));
            int[] out = new int[ranges.length];
            for (int i = 0; i < order.length; i++) {
                out[2 * i] = ranges[2 * order[i]];
                out[2 * i + 1] = ranges[2 * order[i] + 1];
            }
            return out;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof CharClass c && c.negated == negated && Arrays.equals(c.ranges, ranges);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(ranges) * 31 + (negated ? 1 : 0);
        }

        @Override
        public String toString() {
            return Gbnf.write(this);
        }
    }

    /** A reference to the rule of this name. */
    record Ref(String name) implements Expr {}

    /** The parts one after the other; empty = the empty string. */
    record Seq(List<Expr> parts) implements Expr {
        public Seq {
            parts = List.copyOf(parts);
        }
    }

    /** One of the alternatives. */
    record Alt(List<Expr> options) implements Expr {
        public Alt {
            options = List.copyOf(options);
            if (options.isEmpty()) {
                throw new IllegalArgumentException("an alternation needs at least one option");
            }
        }
    }

    /** {@code body} repeated {@code min} to {@code max} times; {@code max < 0} = unbounded. */
    record Repeat(Expr body, int min, int max) implements Expr {
        public Repeat {
            if (min < 0 || (max >= 0 && max < min)) {
                throw new IllegalArgumentException("bad repetition {" + min + "," + max + "}");
            }
        }
    }

    static Expr seq(Expr... parts) {
        return parts.length == 1 ? parts[0] : new Seq(List.of(parts));
    }

    static Expr alt(Expr... options) {
        return options.length == 1 ? options[0] : new Alt(List.of(options));
    }

    static Expr lit(String s) {
        return new Literal(s);
    }

    static Expr ref(String name) {
        return new Ref(name);
    }

    static Expr opt(Expr e) {
        return new Repeat(e, 0, 1);
    }

    static Expr star(Expr e) {
        return new Repeat(e, 0, -1);
    }

    Expr EMPTY = new Seq(List.of());
}
