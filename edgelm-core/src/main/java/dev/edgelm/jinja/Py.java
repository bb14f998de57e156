package dev.edgelm.jinja;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Python's semantics for the values a template works on: None is {@code null}, int is {@link Long}, float is
 * {@link Double}, str is {@link String}, list and tuple are {@link List}, dict is {@link Map} (in insertion
 * order). Truth, equality, ordering, {@code str()}, {@code repr()} and {@code json.dumps} follow Python.
 */
final class Py {
    private Py() {}

    /** {@code str.isspace()} for one character. */
    static boolean isSpace(char c) {
        return Character.isWhitespace(c) || c == 0x85 || c == 0xA0 || c == 0x2007 || c == 0x202F;
    }

    static String strip(String s, String chars) {
        return lstrip(rstrip(s, chars), chars);
    }

    static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length() && stripped(s.charAt(i), chars)) {
            i++;
        }
        return s.substring(i);
    }

    static String rstrip(String s, String chars) {
        int j = s.length();
        while (j > 0 && stripped(s.charAt(j - 1), chars)) {
            j--;
        }
        return s.substring(0, j);
    }

    private static boolean stripped(char c, String chars) {
        return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
    }

    /** {@code str.split(sep, maxsplit)}; with a null separator, splits on white-space runs and drops empty parts. */
    static List<Object> split(String s, String sep, long maxSplit) {
        List<Object> out = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && isSpace(s.charAt(i))) {
                    i++;
                }
                if (i >= n) {
                    break;
                }
                if (maxSplit >= 0 && out.size() == maxSplit) {
                    out.add(rstrip(s.substring(i), null));
                    break;
                }
                int j = i;
                while (j < n && !isSpace(s.charAt(j))) {
                    j++;
                }
                out.add(s.substring(i, j));
                i = j;
            }
            return out;
        }
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        while (maxSplit < 0 || out.size() < maxSplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) {
                break;
            }
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    static boolean truthy(Object v) {
        if (v == null || v instanceof Undefined) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof Long l) {
            return l != 0;
        }
        if (v instanceof Double d) {
            return d != 0.0;
        }
        if (v instanceof String s) {
            return !s.isEmpty();
        }
        if (v instanceof Generator) {
            return true;
        }
        if (v instanceof List<?> l) {
            return !l.isEmpty();
        }
        if (v instanceof Map<?, ?> m) {
            return !m.isEmpty();
        }
        return true;
    }

    static boolean isNumber(Object v) {
        return v instanceof Long || v instanceof Double || v instanceof Boolean;
    }

    /** A number as a long (bool is an int in Python), for values known to be integral. */
    static long toLong(Object v) {
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return (Long) v;
    }

    static double toDouble(Object v) {
        if (v instanceof Double d) {
            return d;
        }
        return toLong(v);
    }

    static boolean isIntegral(Object v) {
        return v instanceof Long || v instanceof Boolean;
    }

    static boolean eq(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a instanceof Generator || b instanceof Generator) {
            return false;
        }
        if (isNumber(a) && isNumber(b)) {
            if (isIntegral(a) && isIntegral(b)) {
                return toLong(a) == toLong(b);
            }
            return toDouble(a) == toDouble(b);
        }
        if (a instanceof List<?> la && b instanceof List<?> lb) {
            if (la.size() != lb.size() || (a instanceof Tuple) != (b instanceof Tuple)) {
                return false;
            }
            for (int i = 0; i < la.size(); i++) {
                if (!eq(la.get(i), lb.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
            if (ma.size() != mb.size()) {
                return false;
            }
            for (Map.Entry<?, ?> e : ma.entrySet()) {
                if (!mb.containsKey(e.getKey()) || !eq(e.getValue(), mb.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    /** Python ordering ({@code <}); throws IllegalArgumentException for values Python cannot order. */
    static int compare(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            if (isIntegral(a) && isIntegral(b)) {
                return Long.compare(toLong(a), toLong(b));
            }
            return Double.compare(toDouble(a), toDouble(b));
        }
        if (a instanceof String sa && b instanceof String sb) {
            return compareCodePoints(sa, sb);
        }
        if (a instanceof List<?> la && b instanceof List<?> lb) {
            for (int i = 0; i < Math.min(la.size(), lb.size()); i++) {
                if (!eq(la.get(i), lb.get(i))) {
                    return compare(la.get(i), lb.get(i));
                }
            }
            return Integer.compare(la.size(), lb.size());
        }
        throw new IllegalArgumentException("'<' not supported between instances of '" + typeName(a) + "' and '" + typeName(b) + "'");
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    static String typeName(Object v) {
        if (v == null) {
            return "NoneType";
        }
        if (v instanceof Undefined) {
            return "Undefined";
        }
        if (v instanceof Generator) {
            return "generator";
        }
        if (v instanceof Boolean) {
            return "bool";
        }
        if (v instanceof Long) {
            return "int";
        }
        if (v instanceof Double) {
            return "float";
        }
        if (v instanceof String) {
            return "str";
        }
        if (v instanceof Tuple) {
            return "tuple";
        }
        if (v instanceof List) {
            return "list";
        }
        if (v instanceof Map) {
            return "dict";
        }
        if (v instanceof Namespace) {
            return "Namespace";
        }
        return "function";
    }

    /** {@code str(v)}. */
    static String str(Object v) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Undefined) {
            return "";
        }
        if (v == null) {
            return "None";
        }
        if (v instanceof Boolean b) {
            return b ? "True" : "False";
        }
        if (v instanceof Long l) {
            return Long.toString(l);
        }
        if (v instanceof Double d) {
            return floatRepr(d);
        }
        return repr(v);
    }

    /** {@code repr(v)}. */
    static String repr(Object v) {
        if (v instanceof String s) {
            return stringRepr(s);
        }
        if (v instanceof Generator) {
            throw new IllegalArgumentException("printing a generator (the result of map, select, reject or items) is not"
                    + " supported: jinja2 prints its memory address; add '| list'");
        }
        if (v instanceof List<?> l) {
            boolean tuple = v instanceof Tuple;
            StringBuilder sb = new StringBuilder(tuple ? "(" : "[");
            for (int i = 0; i < l.size(); i++) {
                sb.append(i > 0 ? ", " : "").append(repr(l.get(i)));
                Sandbox.check(sb);
            }
            return sb.append(tuple && l.size() == 1 ? "," : "").append(tuple ? ')' : ']').toString();
        }
        if (v instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "" : ", ").append(repr(e.getKey())).append(": ").append(repr(e.getValue()));
                first = false;
                Sandbox.check(sb);
            }
            return sb.append('}').toString();
        }
        if (v instanceof Undefined) {
            return "Undefined";
        }
        return v instanceof Namespace || v instanceof Runtime.Callable ? v.toString() : str(v);
    }

    private static String stringRepr(String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder sb = new StringBuilder().append(quote);
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            if (c == quote || c == '\\') {
                sb.append('\\').appendCodePoint(c);
            } else if (c == '\n') {
                sb.append("\\n");
            } else if (c == '\r') {
                sb.append("\\r");
            } else if (c == '\t') {
                sb.append("\\t");
            } else if (!printable(c)) {
                sb.append(c < 0x100 ? String.format("\\x%02x", c) : c < 0x10000 ? String.format("\\u%04x", c)
                        : String.format("\\U%08x", c));
            } else {
                sb.appendCodePoint(c);
            }
        }
        return sb.append(quote).toString();
    }

    /** Python's {@code str.isprintable()} for one character: not a control, format, separator or unassigned one. */
    private static boolean printable(int c) {
        if (c == ' ') {
            return true;
        }
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED,
                 Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /** {@code repr(float)}: the shortest digits that read back, fixed notation for 1e-4 <= |x| < 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal bd = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = bd.unscaledValue().toString();
        int exp = digits.length() - 1 - bd.scale(); // value = d.ddd x 10^exp
        StringBuilder sb = new StringBuilder(d < 0 ? "-" : "");
        if (exp < -4 || exp >= 16) {
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            sb.append('e').append(exp < 0 ? '-' : '+');
            int a = Math.abs(exp);
            sb.append(a < 10 ? "0" : "").append(a);
        } else if (exp < 0) {
            sb.append("0.").append("0".repeat(-exp - 1)).append(digits);
        } else if (digits.length() <= exp + 1) {
            sb.append(digits).append("0".repeat(exp + 1 - digits.length())).append(".0");
        } else {
            sb.append(digits, 0, exp + 1).append('.').append(digits, exp + 1, digits.length());
        }
        return sb.toString();
    }

    /**
     * {@code json.dumps(v, ensure_ascii=False, indent=indent, separators=..., sort_keys=...)} as transformers'
     * {@code tojson} calls it; {@code indent} null means one line with separators ", " and ": ".
     */
    static String toJson(Object v, Long indent, String itemSep, String keySep, boolean sortKeys) {
        return toJson(v, indent, itemSep, keySep, sortKeys, false);
    }

    /** As above; {@code ensureAscii} writes every non-ASCII character as a {@code \\uXXXX} escape, as json.dumps does. */
    static String toJson(Object v, Long indent, String itemSep, String keySep, boolean sortKeys, boolean ensureAscii) {
        StringBuilder sb = new StringBuilder();
        String is = itemSep != null ? itemSep : indent != null ? "," : ", ";
        String ks = keySep != null ? keySep : ": ";
        writeJson(sb, v, indent, 0, is, ks, sortKeys, ensureAscii);
        return sb.toString();
    }

    private static void writeJson(StringBuilder sb, Object v, Long indent, int depth, String itemSep, String keySep,
                                  boolean sortKeys, boolean ensureAscii) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Boolean b) {
            sb.append(b ? "true" : "false");
        } else if (v instanceof Long l) {
            sb.append(l);
        } else if (v instanceof Double d) {
            sb.append(Double.isNaN(d) ? "NaN" : Double.isInfinite(d) ? (d > 0 ? "Infinity" : "-Infinity") : floatRepr(d));
        } else if (v instanceof String s) {
            jsonString(sb, s, ensureAscii);
        } else if (v instanceof Generator) {
            throw new IllegalArgumentException("Object of type generator is not JSON serializable");
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                sb.append(i > 0 ? itemSep : "");
                newline(sb, indent, depth + 1);
                writeJson(sb, l.get(i), indent, depth + 1, itemSep, keySep, sortKeys, ensureAscii);
                Sandbox.check(sb);
            }
            newline(sb, indent, depth);
            sb.append(']');
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
            if (sortKeys) {
                entries.sort((x, y) -> compare(x.getKey(), y.getKey()));
            }
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : entries) {
                sb.append(first ? "" : itemSep);
                first = false;
                newline(sb, indent, depth + 1);
                Object k = e.getKey();
                jsonString(sb, k instanceof String s ? s : k instanceof Double d ? floatRepr(d) : k == null ? "null"
                        : k instanceof Boolean b ? (b ? "true" : "false") : str(k), ensureAscii);
                sb.append(keySep);
                writeJson(sb, e.getValue(), indent, depth + 1, itemSep, keySep, sortKeys, ensureAscii);
                Sandbox.check(sb);
            }
            newline(sb, indent, depth);
            sb.append('}');
        } else if (v instanceof Undefined) {
            throw new IllegalArgumentException("Object of type Undefined is not JSON serializable");
        } else {
            throw new IllegalArgumentException("Object of type " + typeName(v) + " is not JSON serializable");
        }
    }

    private static void newline(StringBuilder sb, Long indent, int depth) {
        if (indent != null) {
            long width = Math.max(0, indent) * (long) depth;
            Sandbox.current().chars(sb.length() + width);
            sb.append('\n').append(" ".repeat((int) width));
            Sandbox.check(sb);
        }
    }

    private static void jsonString(StringBuilder sb, String s, boolean ensureAscii) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || (ensureAscii && c > 0x7e)) { // UTF-16 units, as Python writes them
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    /** Python iteration: list items, dict keys, string characters; Undefined is empty. */
    static Iterable<?> iterate(Object v) {
        if (v instanceof Generator g) {
            return g.consume();
        }
        if (v instanceof List<?> l) {
            return l;
        }
        if (v instanceof Map<?, ?> m) {
            return new ArrayList<>(m.keySet());
        }
        if (v instanceof String s) {
            return codePoints(s);
        }
        if (v instanceof Undefined) {
            return List.of();
        }
        throw new IllegalArgumentException("'" + typeName(v) + "' object is not iterable");
    }

    /** A string's characters (code points, as Python counts them), each as a string. */
    static List<String> codePoints(String s) {
        if (s.length() > Sandbox.current().limits.maxItems()) {
            Sandbox.current().items(s.codePointCount(0, s.length()));
        }
        List<String> out = new ArrayList<>(s.length());
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            out.add(new String(Character.toChars(cp)));
            i += Character.charCount(cp);
        }
        return out;
    }

    /** {@code list(v)}: a new list. */
    static List<Object> toList(Object v) {
        List<Object> out = new ArrayList<>();
        for (Object x : iterate(v)) {
            out.add(x);
        }
        return out;
    }

    /** {@code len(v)}. */
    static long len(Object v) {
        if (v instanceof Generator) {
            throw new IllegalArgumentException("object of type 'generator' has no len()");
        }
        if (v instanceof String s) {
            return s.codePointCount(0, s.length());
        }
        if (v instanceof List<?> l) {
            return l.size();
        }
        if (v instanceof Map<?, ?> m) {
            return m.size();
        }
        if (v instanceof Undefined) {
            return 0;
        }
        throw new IllegalArgumentException("object of type '" + typeName(v) + "' has no len()");
    }
}
