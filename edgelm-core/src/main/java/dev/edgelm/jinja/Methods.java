package dev.edgelm.jinja;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The Python methods templates call on values: {@code str} methods ({@code startswith}, {@code split},
 * {@code strip}, ...) and the read-only {@code dict} methods. Methods that modify a list or dict are refused,
 * as Hugging Face's immutable sandbox does.
 */
final class Methods {
    private static final Set<String> MUTATING = Set.of("append", "extend", "insert", "pop", "remove", "clear", "sort",
            "reverse", "update", "setdefault", "popitem", "add", "discard");

    private Methods() {}

    /** The bound method {@code obj.name}, or null when {@code obj} has no such method. */
    static Object bind(Runtime rt, Object obj, String name) {
        if (obj instanceof String s) {
            return STRING_METHODS.contains(name) ? (Runtime.Callable) (r, a, kw) -> stringMethod(r, s, name, a, kw) : null;
        }
        if ((obj instanceof Map<?, ?> || obj instanceof List<?>) && MUTATING.contains(name)) {
            return (Runtime.Callable) (r, a, kw) -> {
                throw r.error("access to attribute '" + name + "' of '" + Py.typeName(obj) + "' object is unsafe.");
            };
        }
        if (obj instanceof Map<?, ?> m) {
            return switch (name) {
                case "items" -> (Runtime.Callable) (r, a, kw) -> Builtins.items(m);
                case "keys" -> (Runtime.Callable) (r, a, kw) -> new ArrayList<>(m.keySet());
                case "values" -> (Runtime.Callable) (r, a, kw) -> new ArrayList<>(m.values());
                case "get" -> (Runtime.Callable) (r, a, kw) -> {
                    Object v = r.getItemOrNull(m, a.get(0));
                    return v != Runtime.MISSING ? v : a.size() > 1 ? a.get(1) : null;
                };
                case "copy" -> (Runtime.Callable) (r, a, kw) -> new java.util.LinkedHashMap<>(m);
                default -> null;
            };
        }
        if (obj instanceof List<?> l) {
            return switch (name) {
                case "index" -> (Runtime.Callable) (r, a, kw) -> {
                    for (int i = 0; i < l.size(); i++) {
                        if (Py.eq(l.get(i), a.get(0))) {
                            return (long) i;
                        }
                    }
                    throw r.error(Py.repr(a.get(0)) + " is not in list");
                };
                case "count" -> (Runtime.Callable) (r, a, kw) -> l.stream().filter(x -> Py.eq(x, a.get(0))).count();
                default -> null;
            };
        }
        return null;
    }

    private static final Set<String> STRING_METHODS = Set.of("startswith", "endswith", "split", "rsplit", "strip", "lstrip",
            "rstrip", "upper", "lower", "title", "capitalize", "replace", "find", "rfind", "index", "count", "join",
            "splitlines", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "removeprefix",
            "removesuffix", "format");

    private static Object stringMethod(Runtime rt, String s, String name, List<Object> a, Map<String, Object> kw) {
        switch (name) {
            case "startswith", "endswith" -> {
                Object arg = a.get(0);
                List<Object> options = arg instanceof List<?> l ? new ArrayList<>(l) : List.of(arg);
                for (Object o : options) {
                    String p = str(rt, o, name);
                    if (name.equals("startswith") ? s.startsWith(p) : s.endsWith(p)) {
                        return true;
                    }
                }
                return false;
            }
            case "split", "rsplit" -> {
                Object sep = !a.isEmpty() ? a.get(0) : kw.get("sep");
                Object max = a.size() > 1 ? a.get(1) : kw.getOrDefault("maxsplit", -1L);
                String sepStr = sep == null ? null : str(rt, sep, name);
                if (sepStr != null && sepStr.isEmpty()) {
                    throw rt.error("empty separator");
                }
                long maxSplit = Py.toLong(max);
                if (name.equals("split") || maxSplit < 0) {
                    return Py.split(s, sepStr, maxSplit);
                }
                // rsplit with a limit: split the reversed string
                List<Object> parts = Py.split(reverse(s), sepStr == null ? null : reverse(sepStr), maxSplit);
                List<Object> out = new ArrayList<>();
                for (int i = parts.size() - 1; i >= 0; i--) {
                    out.add(reverse((String) parts.get(i)));
                }
                return out;
            }
            case "strip", "lstrip", "rstrip" -> {
                String chars = a.isEmpty() || a.get(0) == null ? null : str(rt, a.get(0), name);
                return switch (name) {
                    case "strip" -> Py.strip(s, chars);
                    case "lstrip" -> Py.lstrip(s, chars);
                    default -> Py.rstrip(s, chars);
                };
            }
            case "upper" -> {
                return s.toUpperCase(Locale.ROOT);
            }
            case "lower" -> {
                return s.toLowerCase(Locale.ROOT);
            }
            case "title" -> {
                return Builtins.title(s);
            }
            case "capitalize" -> {
                return Builtins.capitalize(s);
            }
            case "replace" -> {
                String from = str(rt, a.get(0), name);
                String to = str(rt, a.get(1), name);
                long count = a.size() > 2 ? Py.toLong(a.get(2)) : -1;
                return Builtins.replace(rt, s, from, to, count);
            }
            case "find", "rfind", "index" -> {
                String sub = str(rt, a.get(0), name);
                int at = name.equals("rfind") ? s.lastIndexOf(sub) : s.indexOf(sub);
                if (at < 0 && name.equals("index")) {
                    throw rt.error("substring not found");
                }
                return at < 0 ? -1L : (long) s.codePointCount(0, at);
            }
            case "count" -> {
                String sub = str(rt, a.get(0), name);
                if (sub.isEmpty()) {
                    return Py.len(s) + 1;
                }
                long n = 0;
                for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
                    n++;
                }
                return n;
            }
            case "join" -> {
                StringBuilder sb = new StringBuilder();
                boolean first = true;
                for (Object x : Py.iterate(a.get(0))) {
                    sb.append(first ? "" : s).append(str(rt, x, name));
                    first = false;
                    Sandbox.check(sb);
                }
                return sb.toString();
            }
            case "splitlines" -> {
                List<Object> out = new ArrayList<>();
                for (String line : s.split("\r\n|\r|\n", -1)) {
                    out.add(line);
                }
                if (!out.isEmpty() && ((String) out.getLast()).isEmpty()) {
                    out.removeLast();
                }
                return out;
            }
            case "isdigit" -> {
                return !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            }
            case "isalpha" -> {
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetter);
            }
            case "isalnum" -> {
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetterOrDigit);
            }
            case "isspace" -> {
                return !s.isEmpty() && s.chars().allMatch(c -> Py.isSpace((char) c));
            }
            case "isupper" -> {
                return s.codePoints().anyMatch(Character::isUpperCase) && s.codePoints().noneMatch(Character::isLowerCase);
            }
            case "islower" -> {
                return s.codePoints().anyMatch(Character::isLowerCase) && s.codePoints().noneMatch(Character::isUpperCase);
            }
            case "removeprefix" -> {
                String p = str(rt, a.get(0), name);
                return s.startsWith(p) ? s.substring(p.length()) : s;
            }
            case "removesuffix" -> {
                String p = str(rt, a.get(0), name);
                return s.endsWith(p) && !p.isEmpty() ? s.substring(0, s.length() - p.length()) : s;
            }
            case "format" -> {
                return Builtins.format(rt, s, a, kw);
            }
            default -> throw rt.error("'str' object has no attribute '" + name + "'");
        }
    }

    private static String str(Runtime rt, Object v, String method) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Undefined u) {
            throw u.error(rt.line);
        }
        throw rt.error("str." + method + "() expects a string, not " + Py.typeName(v));
    }

    private static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }
}
