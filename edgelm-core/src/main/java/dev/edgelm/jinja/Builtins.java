package dev.edgelm.jinja;

import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Jinja's built-in filters, tests and global functions, and Python's arithmetic operators. */
final class Builtins {
    private Builtins() {}

    // ---- arithmetic ----

    static Object arithmetic(Runtime rt, String op, Object a, Object b) {
        if (a instanceof Undefined u) {
            throw u.error(rt.line);
        }
        if (b instanceof Undefined u) {
            throw u.error(rt.line);
        }
        if (Py.isNumber(a) && Py.isNumber(b)) {
            boolean ints = Py.isIntegral(a) && Py.isIntegral(b);
            if (ints) {
                long x = Py.toLong(a);
                long y = Py.toLong(b);
                switch (op) {
                    case "+": return Math.addExact(x, y);
                    case "-": return Math.subtractExact(x, y);
                    case "*": return Math.multiplyExact(x, y);
                    case "/":
                        if (y == 0) {
                            throw rt.error("division by zero");
                        }
                        return (double) x / y;
                    case "//":
                        if (y == 0) {
                            throw rt.error("integer division or modulo by zero");
                        }
                        return Math.floorDiv(x, y);
                    case "%":
                        if (y == 0) {
                            throw rt.error("integer division or modulo by zero");
                        }
                        return Math.floorMod(x, y);
                    case "**":
                        if (y >= 0) {
                            long r = 1;
                            for (long i = 0; i < y; i++) {
                                r = Math.multiplyExact(r, x);
                            }
                            return r;
                        }
                        return Math.pow(x, y);
                    default: break;
                }
            }
            double x = Py.toDouble(a);
            double y = Py.toDouble(b);
            switch (op) {
                case "+": return x + y;
                case "-": return x - y;
                case "*": return x * y;
                case "/":
                case "//":
                case "%":
                    if (y == 0) {
                        throw rt.error("float division by zero");
                    }
                    if (op.equals("/")) {
                        return x / y;
                    }
                    double q = Math.floor(x / y);
                    return op.equals("//") ? q : x - q * y;
                case "**": return Math.pow(x, y);
                default: break;
            }
        }
        if (op.equals("+") && a instanceof String x && b instanceof String y) {
            return x + y;
        }
        if (op.equals("+") && a instanceof List<?> x && b instanceof List<?> y) {
            List<Object> out = new ArrayList<>(x);
            out.addAll(y);
            return out;
        }
        if (op.equals("*") && (a instanceof String || a instanceof List<?>) && Py.isIntegral(b)) {
            return repeat(rt, a, Py.toLong(b));
        }
        if (op.equals("*") && (b instanceof String || b instanceof List<?>) && Py.isIntegral(a)) {
            return repeat(rt, b, Py.toLong(a));
        }
        if (op.equals("%") && a instanceof String fmt) {
            return percentFormat(rt, fmt, b instanceof List<?> l ? new ArrayList<>(l) : List.of(b));
        }
        if (op.equals("+") && (a instanceof String || a instanceof List<?>)) {
            throw rt.error("can only concatenate " + Py.typeName(a) + " (not \"" + Py.typeName(b) + "\") to " + Py.typeName(a));
        }
        throw rt.error("unsupported operand type(s) for " + op + ": '" + Py.typeName(a) + "' and '" + Py.typeName(b) + "'");
    }

    private static Object repeat(Runtime rt, Object seq, long n) {
        long each = seq instanceof String s ? s.length() : ((List<?>) seq).size();
        long total = n <= 0 || each == 0 ? 0 : n > Integer.MAX_VALUE ? Long.MAX_VALUE : each * n;
        if (seq instanceof String s) {
            rt.sandbox.chars(total); // refused before anything is allocated
            return n <= 0 ? "" : s.repeat((int) n);
        }
        rt.sandbox.items(total);
        List<Object> out = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            out.addAll((List<?>) seq);
        }
        return out;
    }

    /** {@code "%s" % args} for the conversions templates use: %s, %r, %d, %i, %f, %%. */
    private static String percentFormat(Runtime rt, String fmt, List<Object> args) {
        StringBuilder sb = new StringBuilder();
        int next = 0;
        for (int i = 0; i < fmt.length(); i++) {
            char c = fmt.charAt(i);
            if (c != '%' || i + 1 >= fmt.length()) {
                sb.append(c);
                continue;
            }
            char conv = fmt.charAt(++i);
            if (conv == '%') {
                sb.append('%');
                continue;
            }
            if (next >= args.size()) {
                throw rt.error("not enough arguments for format string");
            }
            Object v = args.get(next++);
            switch (conv) {
                case 's' -> sb.append(Py.str(v));
                case 'r' -> sb.append(Py.repr(v));
                case 'd', 'i' -> sb.append(Py.isIntegral(v) ? Py.toLong(v) : (long) Py.toDouble(v));
                case 'f' -> sb.append(String.format(Locale.ROOT, "%.6f", Py.toDouble(v)));
                default -> throw rt.error("unsupported format character '" + conv + "'");
            }
            Sandbox.check(sb);
        }
        return sb.toString();
    }

    /** {@code str.format} with {} / {0} / {name} fields and no format specs. */
    static String format(Runtime rt, String fmt, List<Object> args, Map<String, Object> kwargs) {
        StringBuilder sb = new StringBuilder();
        int auto = 0;
        for (int i = 0; i < fmt.length(); i++) {
            char c = fmt.charAt(i);
            if ((c == '{' || c == '}') && i + 1 < fmt.length() && fmt.charAt(i + 1) == c) {
                sb.append(c);
                i++;
            } else if (c == '{') {
                int end = fmt.indexOf('}', i);
                if (end < 0) {
                    throw rt.error("single '{' encountered in format string");
                }
                String field = fmt.substring(i + 1, end);
                Object v;
                if (field.isEmpty()) {
                    v = args.get(auto++);
                } else if (field.chars().allMatch(Character::isDigit)) {
                    v = args.get(Integer.parseInt(field));
                } else if (kwargs.containsKey(field)) {
                    v = kwargs.get(field);
                } else {
                    throw rt.error("format field '" + field + "' is not supported");
                }
                sb.append(Py.str(v));
                Sandbox.check(sb);
                i = end;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    // ---- globals ----

    static Object range(Runtime rt, List<Object> a, Map<String, Object> kw) {
        long start = 0;
        long stop;
        long step = 1;
        if (a.size() == 1) {
            stop = Py.toLong(a.get(0));
        } else if (a.size() >= 2) {
            start = Py.toLong(a.get(0));
            stop = Py.toLong(a.get(1));
            if (a.size() > 2) {
                step = Py.toLong(a.get(2));
            }
        } else {
            throw rt.error("range expected at least 1 argument, got 0");
        }
        if (step == 0) {
            throw rt.error("range() arg 3 must not be zero");
        }
        List<Object> out = new ArrayList<>();
        for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
            if (out.size() >= 100_000) {
                throw rt.error("range too big: the sandbox blocks ranges larger than 100000 items (as Jinja2's does)");
            }
            out.add(i);
        }
        return out;
    }

    static Object namespace(Runtime rt, List<Object> a, Map<String, Object> kw) {
        Namespace ns = new Namespace();
        for (Object x : a) {
            if (!(x instanceof Map<?, ?> m)) {
                throw rt.error("namespace() takes a dict or keyword arguments");
            }
            m.forEach((k, v) -> ns.attributes.put(Py.str(k), v));
        }
        ns.attributes.putAll(kw);
        return ns;
    }

    /** transformers' {@code strftime_now(format)}: the local time through Python's strftime codes. */
    static String strftimeNow(String format) {
        return strftime(format, LocalDateTime.now());
    }

    /** Python's {@code t.strftime(format)} for the codes chat templates use. */
    static String strftime(String format, LocalDateTime t) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 >= format.length()) {
                sb.append(c);
                continue;
            }
            char k = format.charAt(++i);
            boolean noPad = false;
            if (k == '-' && i + 1 < format.length()) {
                noPad = true;
                k = format.charAt(++i);
            }
            String two = noPad ? "%d" : "%02d";
            switch (k) {
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> sb.append(String.format("%02d", t.getYear() % 100));
                case 'm' -> sb.append(String.format(two, t.getMonthValue()));
                case 'd' -> sb.append(String.format(two, t.getDayOfMonth()));
                case 'H' -> sb.append(String.format(two, t.getHour()));
                case 'I' -> sb.append(String.format(two, (t.getHour() + 11) % 12 + 1));
                case 'M' -> sb.append(String.format(two, t.getMinute()));
                case 'S' -> sb.append(String.format(two, t.getSecond()));
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'j' -> sb.append(String.format(noPad ? "%d" : "%03d", t.getDayOfYear()));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(k);
            }
        }
        return sb.toString();
    }

    // ---- filters ----

    static Object filter(Runtime rt, String name, Object v, List<Object> a, Map<String, Object> kw) {
        switch (name) {
            case "tojson" -> {
                Object indent = kw.getOrDefault("indent", a.isEmpty() ? null : a.get(0));
                String itemSep = null;
                String keySep = null;
                if (kw.get("separators") instanceof List<?> seps && seps.size() == 2) {
                    itemSep = Py.str(seps.get(0));
                    keySep = Py.str(seps.get(1));
                }
                return Py.toJson(v, indent == null ? null : Py.toLong(indent), itemSep, keySep, Py.truthy(kw.get("sort_keys")),
                        Py.truthy(kw.get("ensure_ascii")));
            }
            case "safe", "string" -> {
                return Py.str(v);
            }
            case "trim" -> {
                Object chars = a.isEmpty() ? kw.get("chars") : a.get(0);
                return Py.strip(Py.str(v), chars == null ? null : Py.str(chars));
            }
            case "items" -> {
                if (v instanceof Undefined) {
                    return List.of();
                }
                if (!(v instanceof Map<?, ?> m)) {
                    throw rt.error("can only get item pairs from a mapping, not " + Py.typeName(v));
                }
                return new Generator(items(m));
            }
            case "length", "count" -> {
                if (v instanceof Generator) {
                    throw rt.error("object of type 'generator' has no len()");
                }
                return Py.len(v);
            }
            case "upper" -> {
                return Py.str(v).toUpperCase(Locale.ROOT);
            }
            case "lower" -> {
                return Py.str(v).toLowerCase(Locale.ROOT);
            }
            case "title" -> {
                return title(Py.str(v));
            }
            case "capitalize" -> {
                return capitalize(Py.str(v));
            }
            case "default", "d" -> {
                Object fallback = a.isEmpty() ? kw.getOrDefault("default_value", "") : a.get(0);
                boolean bool = a.size() > 1 ? Py.truthy(a.get(1)) : Py.truthy(kw.get("boolean"));
                return v instanceof Undefined || (bool && !Py.truthy(v)) ? fallback : v;
            }
            case "join" -> {
                String sep = a.isEmpty() ? Py.str(kw.getOrDefault("d", "")) : Py.str(a.get(0));
                Object attribute = kw.get("attribute");
                StringBuilder sb = new StringBuilder();
                boolean first = true;
                for (Object x : Py.iterate(v)) {
                    sb.append(first ? "" : sep).append(Py.str(attribute == null ? x : attributePath(rt, x, attribute)));
                    first = false;
                    Sandbox.check(sb);
                }
                return sb.toString();
            }
            case "replace" -> {
                long count = a.size() > 2 ? Py.toLong(a.get(2)) : -1;
                return replace(rt, Py.str(v), Py.str(a.get(0)), Py.str(a.get(1)), count);
            }
            case "first" -> {
                List<Object> l = Py.toList(v);
                return l.isEmpty() ? Undefined.anonymous() : l.get(0);
            }
            case "last" -> {
                if (v instanceof Generator) {
                    throw rt.error("'generator' object is not reversible");
                }
                List<Object> l = Py.toList(v);
                return l.isEmpty() ? Undefined.anonymous() : l.get(l.size() - 1);
            }
            case "list" -> {
                return Py.toList(v);
            }
            case "reverse" -> {
                if (v instanceof String s) {
                    return new StringBuilder(s).reverse().toString();
                }
                List<Object> l = Py.toList(v);
                java.util.Collections.reverse(l);
                return l;
            }
            case "unique" -> {
                List<Object> out = new ArrayList<>();
                for (Object x : Py.iterate(v)) {
                    if (out.stream().noneMatch(y -> Py.eq(y, x))) {
                        out.add(x);
                    }
                }
                return out;
            }
            case "sort" -> {
                List<Object> l = Py.toList(v);
                boolean reverse = a.isEmpty() ? Py.truthy(kw.get("reverse")) : Py.truthy(a.get(0));
                Object attribute = kw.get("attribute");
                Comparator<Object> cmp = (x, y) -> Py.compare(attribute == null ? x : attributePath(rt, x, attribute),
                        attribute == null ? y : attributePath(rt, y, attribute));
                l.sort(reverse ? cmp.reversed() : cmp);
                return l;
            }
            case "dictsort" -> {
                if (!(v instanceof Map<?, ?> m)) {
                    throw rt.error("dictsort expects a mapping");
                }
                List<Object> pairs = items(m);
                pairs.sort((x, y) -> Py.compare(((List<?>) x).get(0), ((List<?>) y).get(0)));
                return pairs;
            }
            case "map" -> {
                List<Object> out = new ArrayList<>();
                Object attribute = kw.get("attribute");
                for (Object x : Py.truthy(v) ? Py.iterate(v) : List.of()) { // jinja2: "if seq:" first
                    if (attribute != null) {
                        Object got = attributePath(rt, x, attribute);
                        out.add(got instanceof Undefined && kw.containsKey("default") ? kw.get("default") : got);
                    } else {
                        out.add(filter(rt, Py.str(a.get(0)), x, a.subList(1, a.size()), Map.of()));
                    }
                }
                return new Generator(out);
            }
            case "select", "reject", "selectattr", "rejectattr" -> {
                boolean byAttribute = name.endsWith("attr");
                boolean keep = name.startsWith("select");
                List<Object> out = new ArrayList<>();
                for (Object x : Py.truthy(v) ? Py.iterate(v) : List.of()) { // jinja2: "if seq:" first
                    Object subject = byAttribute ? attributePath(rt, x, a.get(0)) : x;
                    int testAt = byAttribute ? 1 : 0;
                    boolean pass = a.size() > testAt
                            ? test(rt, Py.str(a.get(testAt)), subject, a.subList(testAt + 1, a.size()))
                            : Py.truthy(subject);
                    if (pass == keep) {
                        out.add(x);
                    }
                }
                return new Generator(out);
            }
            case "attr" -> {
                return rt.getAttr(v, Py.str(a.get(0)));
            }
            case "abs" -> {
                return v instanceof Double d ? (Object) Math.abs(d) : (Object) Math.abs(Py.toLong(v));
            }
            case "int" -> {
                return toInt(v, a.isEmpty() ? 0L : a.get(0));
            }
            case "float" -> {
                return toFloat(v, a.isEmpty() ? 0.0 : a.get(0));
            }
            case "round" -> {
                long precision = a.isEmpty() ? 0 : Py.toLong(a.get(0));
                double scale = Math.pow(10, precision);
                return Math.rint(Py.toDouble(v) * scale) / scale;
            }
            case "sum" -> {
                Object total = kw.getOrDefault("start", 0L);
                Object attribute = kw.get("attribute");
                for (Object x : Py.iterate(v)) {
                    total = arithmetic(rt, "+", total, attribute == null ? x : attributePath(rt, x, attribute));
                }
                return total;
            }
            case "min", "max" -> {
                List<Object> l = Py.toList(v);
                if (l.isEmpty()) {
                    return Undefined.anonymous();
                }
                Object best = l.get(0);
                for (Object x : l) {
                    int c = Py.compare(x, best);
                    if (name.equals("min") ? c < 0 : c > 0) {
                        best = x;
                    }
                }
                return best;
            }
            case "indent" -> {
                Object w = a.isEmpty() ? kw.getOrDefault("width", 4L) : a.get(0);
                if (!(w instanceof String)) {
                    rt.sandbox.chars(Py.toLong(w));
                }
                String pad = w instanceof String s ? s : " ".repeat((int) Math.max(0, Py.toLong(w)));
                boolean first = a.size() > 1 ? Py.truthy(a.get(1)) : Py.truthy(kw.get("first"));
                boolean blank = a.size() > 2 ? Py.truthy(a.get(2)) : Py.truthy(kw.get("blank"));
                String s = Py.str(v);
                String[] lines = s.split("\n", -1);
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < lines.length; i++) {
                    if (i > 0) {
                        sb.append('\n');
                    }
                    boolean pads = (i > 0 || first) && (blank || !lines[i].isEmpty());
                    sb.append(pads ? pad : "").append(lines[i]);
                    Sandbox.check(sb);
                }
                return sb.toString();
            }
            case "escape", "e", "forceescape" -> {
                return Py.str(v).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                        .replace("\"", "&#34;").replace("'", "&#39;");
            }
            case "wordcount" -> {
                return (long) Py.split(Py.str(v), null, -1).size();
            }
            case "center" -> {
                String s = Py.str(v);
                long w = a.isEmpty() ? 80 : Py.toLong(a.get(0));
                rt.sandbox.chars(w);
                int width = (int) w;
                int total = Math.max(0, width - (int) Py.len(s));
                int left = total / 2 + (total & width & 1);
                return " ".repeat(left) + s + " ".repeat(total - left);
            }
            default -> throw rt.error("no filter named '" + name + "'");
        }
    }

    private static Object attributePath(Runtime rt, Object x, Object attribute) {
        Object cur = x;
        for (String part : Py.str(attribute).split("\\.")) {
            cur = part.chars().allMatch(Character::isDigit) && !part.isEmpty()
                    ? rt.getItem(cur, Long.parseLong(part)) : rt.getItem(cur, part);
        }
        return cur;
    }

    static List<Object> items(Map<?, ?> m) {
        List<Object> out = new ArrayList<>(m.size());
        m.forEach((k, x) -> out.add(new Tuple(k, x)));
        return out;
    }

    static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean prevCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            boolean cased = Character.isLetter(cp);
            sb.appendCodePoint(cased ? (prevCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp)) : cp);
            prevCased = cased;
            i += Character.charCount(cp);
        }
        return sb.toString();
    }

    static String capitalize(String s) {
        return s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
    }

    static String replace(Runtime rt, String s, String from, String to, long count) {
        if (to.length() > from.length()) { // refused before it is built: at most one replacement per character and one more
            long occurrences = from.isEmpty() ? s.length() + 1L : (s.length() / from.length());
            if (count >= 0) {
                occurrences = Math.min(occurrences, count);
            }
            long growth = occurrences * (to.length() - from.length());
            if (s.length() + growth > rt.sandbox.limits.maxChars()) {
                occurrences = countOccurrences(s, from, count);
                rt.sandbox.chars(s.length() + occurrences * (to.length() - from.length()));
            }
        }
        if (count < 0) {
            return s.replace(from, to);
        }
        StringBuilder sb = new StringBuilder();
        int pos = 0;
        for (long n = 0; n < count; n++) {
            int at = s.indexOf(from, pos);
            if (at < 0) {
                break;
            }
            sb.append(s, pos, at).append(to);
            pos = at + from.length();
            if (from.isEmpty()) {
                if (pos < s.length()) {
                    sb.append(s.charAt(pos));
                }
                pos++;
            }
        }
        if (pos <= s.length()) {
            sb.append(s, pos, s.length());
        }
        return sb.toString();
    }

    private static long countOccurrences(String s, String from, long max) {
        if (from.isEmpty()) {
            return max < 0 ? s.length() + 1L : Math.min(max, s.length() + 1L);
        }
        long n = 0;
        for (int at = s.indexOf(from); at >= 0 && (max < 0 || n < max); at = s.indexOf(from, at + from.length())) {
            n++;
        }
        return n;
    }

    private static Object toInt(Object v, Object fallback) {
        if (Py.isIntegral(v)) {
            return Py.toLong(v);
        }
        if (v instanceof Double d) {
            return (long) (double) d;
        }
        try {
            return Long.parseLong(Py.str(v).strip());
        } catch (NumberFormatException e) {
            try {
                return (long) Double.parseDouble(Py.str(v).strip());
            } catch (NumberFormatException e2) {
                return fallback;
            }
        }
    }

    private static Object toFloat(Object v, Object fallback) {
        if (Py.isNumber(v)) {
            return Py.toDouble(v);
        }
        try {
            return Double.parseDouble(Py.str(v).strip());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    // ---- tests ----

    static boolean test(Runtime rt, String name, Object v, List<Object> a) {
        return switch (name) {
            case "defined" -> !(v instanceof Undefined);
            case "undefined" -> v instanceof Undefined;
            case "none" -> v == null;
            case "string" -> v instanceof String;
            case "number" -> Py.isNumber(v);
            case "integer" -> v instanceof Long;
            case "float" -> v instanceof Double;
            case "boolean" -> v instanceof Boolean;
            case "true" -> Boolean.TRUE.equals(v);
            case "false" -> Boolean.FALSE.equals(v);
            case "mapping" -> v instanceof Map<?, ?>;
            case "sequence", "iterable" -> (v instanceof List<?> && !(name.equals("sequence") && v instanceof Generator))
                    || v instanceof String || v instanceof Map<?, ?> || v instanceof Undefined;
            case "callable" -> v instanceof Runtime.Callable;
            case "sameas" -> v == a.get(0) || (v != null && Py.isNumber(v) && v.equals(a.get(0)));
            case "eq", "equalto", "==" -> Py.eq(v, a.get(0));
            case "ne", "!=" -> !Py.eq(v, a.get(0));
            case "lt", "lessthan", "<" -> rt.compareOne("<", v, a.get(0));
            case "le", "<=" -> rt.compareOne("<=", v, a.get(0));
            case "gt", "greaterthan", ">" -> rt.compareOne(">", v, a.get(0));
            case "ge", ">=" -> rt.compareOne(">=", v, a.get(0));
            case "in" -> rt.contains(a.get(0), v);
            case "even" -> Py.toLong(v) % 2 == 0;
            case "odd" -> Py.toLong(v) % 2 != 0;
            case "divisibleby" -> Py.toLong(v) % Py.toLong(a.get(0)) == 0;
            case "lower" -> v instanceof String s && s.equals(s.toLowerCase(Locale.ROOT));
            case "upper" -> v instanceof String s && s.equals(s.toUpperCase(Locale.ROOT));
            case "escaped" -> false;
            default -> throw rt.error("no test named '" + name + "'");
        };
    }
}
