package dev.edgelm.grammar;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * GBNF text, llama.cpp's grammar dialect: {@code name ::= alternatives} rules (a rule ends at a line break
 * outside parentheses), {@code "literals"} and {@code [classes]} with {@code \n \r \t \\ \" \[ \] \xHH
 * \\uHHHH \UHHHHHHHH} escapes, {@code [^...]}, {@code .}, groups, {@code * + ? {m} {m,} {m,n}},
 * {@code # comments}. Written by hand: it is a few hundred lines and no Java library reads this dialect.
 */
final class Gbnf {
    private final String src;
    private int pos;
    private int line = 1;

    private Gbnf(String src) {
        this.src = src;
    }

    static Map<String, Expr> parse(String text) {
        return new Gbnf(text).rules();
    }

    /** The right-hand side of one rule, its references unchecked (for building grammars from parts). */
    static Expr parseExpr(String body) {
        Gbnf p = new Gbnf(body);
        p.skipSpace(true);
        Expr e = p.alternatives(false);
        p.skipSpace(true);
        if (p.pos != body.length()) {
            throw p.error("unexpected '" + body.charAt(p.pos) + "'");
        }
        return e;
    }

    private EdgeLmException error(String what) {
        return new EdgeLmException("grammar: " + what + " at line " + line);
    }

    private Map<String, Expr> rules() {
        Map<String, Expr> rules = new LinkedHashMap<>();
        skipSpace(true);
        while (pos < src.length()) {
            String name = name();
            if (name.isEmpty()) {
                throw error("expected a rule name, found '" + src.charAt(pos) + "'");
            }
            skipSpace(false);
            if (!src.startsWith("::=", pos)) {
                throw error("expected '::=' after rule name '" + name + "'");
            }
            pos += 3;
            skipSpace(true);
            Expr body = alternatives(false);
            if (rules.put(name, body) != null) {
                throw error("rule '" + name + "' is defined twice");
            }
            if (pos < src.length() && src.charAt(pos) != '\n' && src.charAt(pos) != '\r') {
                throw error("unexpected '" + src.charAt(pos) + "'");
            }
            skipSpace(true);
        }
        if (rules.isEmpty()) {
            throw new EdgeLmException("grammar: no rules");
        }
        for (Expr e : rules.values()) {
            checkRefs(e, rules);
        }
        return rules;
    }

    private static void checkRefs(Expr e, Map<String, Expr> rules) {
        switch (e) {
            case Expr.Ref r -> {
                if (!rules.containsKey(r.name())) {
                    throw new EdgeLmException("grammar: rule '" + r.name() + "' is used but not defined");
                }
            }
            case Expr.Seq s -> s.parts().forEach(p -> checkRefs(p, rules));
            case Expr.Alt a -> a.options().forEach(p -> checkRefs(p, rules));
            case Expr.Repeat r -> checkRefs(r.body(), rules);
            default -> {}
        }
    }

    private String name() {
        int start = pos;
        while (pos < src.length() && isNameChar(src.charAt(pos))) {
            pos++;
        }
        return src.substring(start, pos);
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    /** Skips blanks and comments; line breaks too when {@code newlines}. */
    private void skipSpace(boolean newlines) {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '#') {
                while (pos < src.length() && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
                if (c == '\n') {
                    line++;
                }
                pos++;
            } else {
                break;
            }
        }
    }

    private Expr alternatives(boolean nested) {
        List<Expr> options = new ArrayList<>();
        options.add(sequence(nested));
        while (true) {
            int save = pos;
            int saveLine = line;
            skipSpace(true); // an alternative may go on at the next line, starting with '|'
            if (pos >= src.length() || src.charAt(pos) != '|') {
                pos = save;
                line = saveLine;
                break;
            }
            pos++;
            skipSpace(true);
            options.add(sequence(nested));
        }
        return options.size() == 1 ? options.getFirst() : new Expr.Alt(options);
    }

    private Expr sequence(boolean nested) {
        List<Expr> parts = new ArrayList<>();
        while (pos < src.length()) {
            char c = src.charAt(pos);
            Expr atom;
            if (c == '"') {
                pos++;
                StringBuilder sb = new StringBuilder();
                while (true) {
                    if (pos >= src.length() || src.charAt(pos) == '\n') {
                        throw error("unterminated string literal");
                    }
                    if (src.charAt(pos) == '"') {
                        pos++;
                        break;
                    }
                    sb.appendCodePoint(character());
                }
                atom = new Expr.Literal(sb.toString());
            } else if (c == '[') {
                atom = charClass();
            } else if (c == '.') {
                pos++;
                atom = new Expr.CharClass(new int[0], true);
            } else if (c == '(') {
                pos++;
                skipSpace(true);
                atom = alternatives(true);
                if (pos >= src.length() || src.charAt(pos) != ')') {
                    throw error("expected ')'");
                }
                pos++;
            } else if (c == '<') {
                throw error("token references (<...>) are not supported");
            } else if (isNameChar(c)) {
                int save = pos;
                String name = name();
                int after = pos;
                skipSpace(false);
                if (src.startsWith("::=", pos)) { // the next rule begins: this rule ended at the line break
                    pos = save;
                    break;
                }
                pos = after;
                atom = new Expr.Ref(name);
            } else {
                break;
            }
            skipSpace(nested);
            atom = postfix(atom, nested);
            parts.add(atom);
        }
        return parts.size() == 1 ? parts.getFirst() : new Expr.Seq(parts);
    }

    private Expr postfix(Expr atom, boolean nested) {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '*') {
                atom = new Expr.Repeat(atom, 0, -1);
            } else if (c == '+') {
                atom = new Expr.Repeat(atom, 1, -1);
            } else if (c == '?') {
                atom = new Expr.Repeat(atom, 0, 1);
            } else if (c == '{') {
                pos++;
                skipSpace(false);
                int min = number();
                int max = min;
                skipSpace(false);
                if (pos < src.length() && src.charAt(pos) == ',') {
                    pos++;
                    skipSpace(false);
                    max = pos < src.length() && Character.isDigit(src.charAt(pos)) ? number() : -1;
                    skipSpace(false);
                }
                if (pos >= src.length() || src.charAt(pos) != '}') {
                    throw error("expected '}' in a repetition");
                }
                if (max >= 0 && max < min) {
                    throw error("repetition {" + min + "," + max + "} has max < min");
                }
                atom = new Expr.Repeat(atom, min, max);
            } else {
                break;
            }
            pos++;
            skipSpace(nested);
        }
        return atom;
    }

    private int number() {
        int start = pos;
        while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
            pos++;
        }
        if (start == pos || pos - start > 6) {
            throw error("expected a repetition count (0..999999)");
        }
        return Integer.parseInt(src.substring(start, pos));
    }

    private Expr charClass() {
        pos++; // [
        boolean negated = pos < src.length() && src.charAt(pos) == '^';
        if (negated) {
            pos++;
        }
        List<Integer> ranges = new ArrayList<>();
        while (true) {
            if (pos >= src.length() || src.charAt(pos) == '\n') {
                throw error("unterminated character class");
            }
            if (src.charAt(pos) == ']') {
                pos++;
                break;
            }
            int lo = character();
            int hi = lo;
            if (pos + 1 < src.length() && src.charAt(pos) == '-' && src.charAt(pos + 1) != ']') {
                pos++;
                hi = character();
                if (hi < lo) {
                    throw error("character range is backwards");
                }
            }
            ranges.add(lo);
            ranges.add(hi);
        }
        return new Expr.CharClass(ranges.stream().mapToInt(Integer::intValue).toArray(), negated);
    }

    /** One character of a literal or class, escapes decoded. */
    private int character() {
        char c = src.charAt(pos);
        if (c != '\\') {
            int cp = src.codePointAt(pos);
            pos += Character.charCount(cp);
            return cp;
        }
        if (pos + 1 >= src.length()) {
            throw error("dangling escape");
        }
        char e = src.charAt(pos + 1);
        pos += 2;
        return switch (e) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '[', ']', '-', '^', '/' -> e;
            case 'x' -> hex(2);
            case 'u' -> hex(4);
            case 'U' -> hex(8);
            default -> throw error("unknown escape '\\" + e + "'");
        };
    }

    private int hex(int digits) {
        if (pos + digits > src.length()) {
            throw error("short hex escape");
        }
        try {
            int v = Integer.parseUnsignedInt(src.substring(pos, pos + digits), 16);
            pos += digits;
            if (v > Character.MAX_CODE_POINT) {
                throw error("code point out of range");
            }
            return v;
        } catch (NumberFormatException ex) {
            throw error("bad hex escape");
        }
    }

    // ---- writing ----

    static String write(Expr e) {
        StringBuilder sb = new StringBuilder();
        write(e, sb, false);
        return sb.toString();
    }

    private static void write(Expr e, StringBuilder sb, boolean inSeq) {
        switch (e) {
            case Expr.Literal l -> {
                sb.append('"');
                l.text().codePoints().forEach(cp -> escape(cp, sb, true));
                sb.append('"');
            }
            case Expr.CharClass c -> {
                if (c.negated() && c.ranges().length == 0) {
                    sb.append('.');
                    return;
                }
                sb.append(c.negated() ? "[^" : "[");
                int[] r = c.ranges();
                for (int i = 0; i < r.length; i += 2) {
                    escape(r[i], sb, false);
                    if (r[i + 1] != r[i]) {
                        sb.append('-');
                        escape(r[i + 1], sb, false);
                    }
                }
                sb.append(']');
            }
            case Expr.Ref r -> sb.append(r.name());
            case Expr.Seq s -> {
                if (s.parts().isEmpty()) {
                    sb.append("\"\"");
                    return;
                }
                if (inSeq) {
                    sb.append('(');
                }
                for (int i = 0; i < s.parts().size(); i++) {
                    if (i > 0) {
                        sb.append(' ');
                    }
                    write(s.parts().get(i), sb, true);
                }
                if (inSeq) {
                    sb.append(')');
                }
            }
            case Expr.Alt a -> {
                if (inSeq) {
                    sb.append('(');
                }
                for (int i = 0; i < a.options().size(); i++) {
                    if (i > 0) {
                        sb.append(" | ");
                    }
                    write(a.options().get(i), sb, false);
                }
                if (inSeq) {
                    sb.append(')');
                }
            }
            case Expr.Repeat r -> {
                write(r.body(), sb, true);
                if (r.min() == 0 && r.max() == 1) {
                    sb.append('?');
                } else if (r.min() == 0 && r.max() < 0) {
                    sb.append('*');
                } else if (r.min() == 1 && r.max() < 0) {
                    sb.append('+');
                } else if (r.max() == r.min()) {
                    sb.append('{').append(r.min()).append('}');
                } else {
                    sb.append('{').append(r.min()).append(',').append(r.max() < 0 ? "" : r.max()).append('}');
                }
            }
        }
    }

    private static void escape(int cp, StringBuilder sb, boolean literal) {
        switch (cp) {
            case '\n' -> sb.append("\\n");
            case '\r' -> sb.append("\\r");
            case '\t' -> sb.append("\\t");
            case '\\' -> sb.append("\\\\");
            default -> {
                if (literal && cp == '"') {
                    sb.append("\\\"");
                } else if (!literal && (cp == ']' || cp == '[' || cp == '-' || cp == '^')) {
                    sb.append('\\').append((char) cp);
                } else if (cp < 0x20 || cp == 0x7F) {
                    sb.append(String.format("\\x%02X", cp));
                } else {
                    sb.appendCodePoint(cp);
                }
            }
        }
    }
}
