package dev.edgelm.jinja;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Executes a parsed template: scopes, loops, macros, expression evaluation. One per render. */
final class Runtime {

    /** Something a template can call: a macro, a global function, a bound method, {@code loop.cycle}. */
    interface Callable {
        Object call(Runtime rt, List<Object> args, Map<String, Object> kwargs);
    }

    private enum Signal { NORMAL, BREAK, CONTINUE }

    /** A scope: loop bodies and macros get their own, {@code if} blocks do not (as in Jinja). */
    private static final class Frame {
        final Map<String, Object> vars = new HashMap<>();
        final Frame parent;

        Frame(Frame parent) {
            this.parent = parent;
        }
    }

    private final Frame globals;
    final Sandbox sandbox;
    int line;

    Runtime(Map<String, Object> variables, Limits limits) {
        sandbox = new Sandbox(limits, this);
        globals = new Frame(null);
        globals.vars.put("range", (Callable) Builtins::range);
        globals.vars.put("dict", (Callable) (rt, a, kw) -> new LinkedHashMap<>(kw));
        globals.vars.put("namespace", (Callable) Builtins::namespace);
        globals.vars.put("raise_exception", (Callable) (rt, a, kw) -> {
            String message = a.isEmpty() ? "" : Py.str(a.get(0));
            throw new TemplateException(message.isBlank() ? "the template raised an error without a message" : message, rt.line);
        });
        globals.vars.put("strftime_now", (Callable) (rt, a, kw) -> Builtins.strftimeNow(Py.str(a.get(0))));
        globals.vars.putAll(variables);
    }

    String render(List<Node> body) {
        StringBuilder out = new StringBuilder();
        Sandbox previous = sandbox.enter();
        try {
            exec(body, new Frame(globals), out);
        } catch (TemplateException e) {
            throw e;
        } catch (StackOverflowError e) {
            throw new TemplateException("maximum recursion depth exceeded", line);
        } catch (ClassCastException | NullPointerException e) {
            // a value of the wrong type reached an operation (Python's TypeError)
            throw new TemplateException("unsupported value type in this operation", line);
        } catch (RuntimeException e) {
            throw new TemplateException(e.getMessage() == null ? e.toString() : e.getMessage(), line);
        } finally {
            Sandbox.leave(previous);
        }
        return out.toString();
    }

    TemplateException error(String message) {
        return new TemplateException(message, line);
    }

    // ---- statements ----

    private Signal exec(List<Node> nodes, Frame f, StringBuilder out) {
        for (Node n : nodes) {
            Signal s = exec(n, f, out);
            if (s != Signal.NORMAL) {
                return s;
            }
        }
        return Signal.NORMAL;
    }

    private Signal exec(Node node, Frame f, StringBuilder out) {
        try {
            sandbox.deeper();
            sandbox.step();
            return execNode(node, f, out);
        } finally {
            sandbox.shallower();
        }
    }

    private Signal execNode(Node node, Frame f, StringBuilder out) {
        switch (node) {
            case Node.Text t -> {
                out.append(t.text());
                sandbox.output(out.length());
            }
            case Node.Output o -> {
                line = o.line();
                String s = Py.str(eval(o.expr(), f));
                sandbox.output(out.length() + s.length());
                out.append(s);
            }
            case Node.If i -> {
                line = i.line();
                for (int k = 0; k < i.conditions().size(); k++) {
                    if (Py.truthy(eval(i.conditions().get(k), f))) {
                        return exec(i.bodies().get(k), f, out);
                    }
                }
                return exec(i.otherwise(), f, out);
            }
            case Node.For loop -> {
                return execFor(loop, f, out);
            }
            case Node.Set s -> {
                line = s.line();
                assign(s.target(), evalMarkup(s.value(), f), f);
            }
            case Node.SetBlock s -> {
                StringBuilder captured = new StringBuilder();
                exec(s.body(), new Frame(f), captured);
                assign(s.target(), captured.toString(), f);
            }
            case Node.FilterBlock fb -> {
                StringBuilder captured = new StringBuilder();
                exec(fb.body(), f, captured);
                line = fb.line();
                Frame applied = new Frame(f);
                applied.vars.put(Node.FilterBlock.BODY, captured.toString());
                String s = Py.str(eval(fb.filters(), applied));
                sandbox.output(out.length() + s.length());
                out.append(s);
            }
            case Node.Macro m -> f.vars.put(m.name(), new Macro(m, f));
            case Node.Break b -> {
                return Signal.BREAK;
            }
            case Node.Continue c -> {
                return Signal.CONTINUE;
            }
        }
        return Signal.NORMAL;
    }

    private Signal execFor(Node.For loop, Frame f, StringBuilder out) {
        line = loop.line();
        Object iterable = eval(loop.iterable(), f);
        if (iterable == null) {
            throw error("'NoneType' object is not iterable");
        }
        List<Object> items = Py.toList(iterable);
        sandbox.items(items.size());
        if (loop.filter() != null) {
            List<Object> kept = new ArrayList<>();
            for (Object item : items) {
                sandbox.step();
                Frame probe = new Frame(f);
                assign(loop.target(), item, probe);
                if (Py.truthy(eval(loop.filter(), probe))) {
                    kept.add(item);
                }
            }
            items = kept;
        }
        if (items.isEmpty()) {
            return exec(loop.otherwise(), f, out);
        }
        LoopContext ctx = new LoopContext(items);
        for (int i = 0; i < items.size(); i++) {
            sandbox.step();
            ctx.index0 = i;
            Frame body = new Frame(f);
            assign(loop.target(), items.get(i), body);
            body.vars.put("loop", ctx);
            Signal s = exec(loop.body(), body, out);
            if (s == Signal.BREAK) {
                break;
            }
        }
        return Signal.NORMAL;
    }

    private void assign(Node.Target target, Object value, Frame f) {
        switch (target) {
            case Node.Target.Name n -> f.vars.put(n.name(), value);
            case Node.Target.Tuple t -> {
                List<Object> values = value instanceof List<?> || value instanceof String || value instanceof Map<?, ?>
                        ? Py.toList(value) : null;
                if (values == null || values.size() != t.names().size()) {
                    throw error("cannot unpack " + Py.typeName(value) + " into " + t.names().size() + " names");
                }
                for (int i = 0; i < values.size(); i++) {
                    f.vars.put(t.names().get(i), values.get(i));
                }
            }
            case Node.Target.Attribute a -> {
                Object ns = lookup(a.object(), f);
                if (!(ns instanceof Namespace n)) {
                    throw error("cannot assign attribute on non-namespace object");
                }
                n.attributes.put(a.attribute(), value);
            }
        }
    }

    private static Object lookup(String name, Frame f) {
        for (Frame x = f; x != null; x = x.parent) {
            Object v = x.vars.get(name);
            if (v != null || x.vars.containsKey(name)) {
                return v;
            }
        }
        return Undefined.name(name);
    }

    // ---- expressions ----

    Object eval(Expr e, Frame f) {
        try {
            sandbox.deeper();
            sandbox.step();
            Object v = evalNode(e, f);
            if (v instanceof Markup m) {
                return m.text(); // read as plain text outside +, set and conditionals
            }
            return e instanceof Expr.Literal || e instanceof Expr.Name || e instanceof Expr.GetAttr || e instanceof Expr.GetItem
                    ? v : sandbox.produced(v);
        } finally {
            sandbox.shallower();
        }
    }

    private Object evalNode(Expr e, Frame f) {
        return switch (e) {
            case Expr.Literal l -> l.value();
            case Expr.Name n -> lookup(n.name(), f);
            case Expr.ListLiteral l -> {
                List<Object> out = new ArrayList<>(l.items().size());
                for (Expr x : l.items()) {
                    out.add(eval(x, f));
                }
                yield out;
            }
            case Expr.TupleLiteral t -> {
                List<Object> out = new ArrayList<>(t.items().size());
                for (Expr x : t.items()) {
                    out.add(eval(x, f));
                }
                yield new Tuple(out);
            }
            case Expr.DictLiteral d -> {
                Map<Object, Object> out = new LinkedHashMap<>();
                for (int i = 0; i < d.keys().size(); i++) {
                    out.put(eval(d.keys().get(i), f), eval(d.values().get(i), f));
                }
                yield out;
            }
            case Expr.GetAttr g -> getAttr(eval(g.object(), f), g.name());
            case Expr.GetItem g -> getItem(eval(g.object(), f), eval(g.key(), f));
            case Expr.Slice s -> slice(eval(s.object(), f), opt(s.start(), f), opt(s.stop(), f), opt(s.step(), f));
            case Expr.Call c -> call(eval(c.function(), f), c.args(), f);
            case Expr.Filter fl -> Builtins.filter(this, fl.name(), eval(fl.input(), f), evalArgs(fl.args(), f), evalKwargs(fl.args(), f));
            case Expr.Test t -> {
                boolean r = Builtins.test(this, t.name(), eval(t.input(), f), evalArgs(t.args(), f));
                yield t.negated() != r;
            }
            case Expr.Unary u -> unary(u.op(), eval(u.operand(), f));
            case Expr.Binary b -> binary(b, f);
            case Expr.Compare c -> compare(c, f);
            case Expr.Conditional c -> Py.truthy(eval(c.condition(), f)) ? eval(c.then(), f)
                    : c.otherwise() == null ? Undefined.anonymous() : eval(c.otherwise(), f);
        };
    }

    /** Evaluates where jinja2's Markup type can show: as an operand of +, a value set, a conditional's branch. */
    private Object evalMarkup(Expr e, Frame f) {
        try {
            sandbox.deeper();
            return evalMarkupNode(e, f);
        } finally {
            sandbox.shallower();
        }
    }

    private Object evalMarkupNode(Expr e, Frame f) {
        if (e instanceof Expr.Filter fl && (fl.name().equals("safe") || fl.name().equals("string")) && fl.args().positional().isEmpty()) {
            Object in = evalMarkup(fl.input(), f);
            return fl.name().equals("safe") || in instanceof Markup ? new Markup(Py.str(in instanceof Markup m ? m.text() : in))
                    : eval(e, f);
        }
        if (e instanceof Expr.Binary b && b.op().equals("+")) {
            Object left = evalMarkup(b.left(), f);
            Object right = evalMarkup(b.right(), f);
            if ((left instanceof Markup || right instanceof Markup)
                    && (left instanceof String || left instanceof Markup) && (right instanceof String || right instanceof Markup)) {
                sandbox.step();
                return sandbox.produced(Markup.concat(left, right));
            }
            return sandbox.produced(Builtins.arithmetic(this, "+", plain(left), plain(right)));
        }
        if (e instanceof Expr.Name n) {
            sandbox.step();
            return lookup(n.name(), f);
        }
        if (e instanceof Expr.Conditional c) {
            sandbox.step();
            return Py.truthy(eval(c.condition(), f)) ? evalMarkup(c.then(), f)
                    : c.otherwise() == null ? Undefined.anonymous() : evalMarkup(c.otherwise(), f);
        }
        return eval(e, f);
    }

    private static Object plain(Object v) {
        return v instanceof Markup m ? m.text() : v;
    }

    private Object opt(Expr e, Frame f) {
        return e == null ? null : eval(e, f);
    }

    private List<Object> evalArgs(Expr.Args a, Frame f) {
        List<Object> out = new ArrayList<>(a.positional().size());
        for (Expr x : a.positional()) {
            out.add(eval(x, f));
        }
        return out;
    }

    private Map<String, Object> evalKwargs(Expr.Args a, Frame f) {
        if (a.names().isEmpty()) {
            return Map.of();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < a.names().size(); i++) {
            out.put(a.names().get(i), eval(a.named().get(i), f));
        }
        return out;
    }

    private Object call(Object fn, Expr.Args args, Frame f) {
        if (fn instanceof Undefined u) {
            throw u.error(line);
        }
        if (!(fn instanceof Callable c)) {
            throw error("'" + Py.typeName(fn) + "' object is not callable");
        }
        return c.call(this, evalArgs(args, f), evalKwargs(args, f));
    }

    private Object unary(String op, Object v) {
        if (op.equals("not")) {
            return !Py.truthy(v);
        }
        if (v instanceof Undefined u) {
            throw u.error(line);
        }
        if (!Py.isNumber(v)) {
            throw error("bad operand type for unary " + op + ": '" + Py.typeName(v) + "'");
        }
        if (op.equals("+")) {
            return v instanceof Boolean ? Py.toLong(v) : v;
        }
        return v instanceof Double d ? (Object) (-d) : (Object) (-Py.toLong(v));
    }

    private Object binary(Expr.Binary b, Frame f) {
        String op = b.op();
        if (op.equals("+")) {
            return evalMarkup(b, f);
        }
        Object left = eval(b.left(), f);
        switch (op) {
            case "and" -> {
                return Py.truthy(left) ? eval(b.right(), f) : left;
            }
            case "or" -> {
                return Py.truthy(left) ? left : eval(b.right(), f);
            }
            case "~" -> {
                return Py.str(left) + Py.str(eval(b.right(), f));
            }
            default -> {
                return Builtins.arithmetic(this, op, left, eval(b.right(), f));
            }
        }
    }

    private Object compare(Expr.Compare c, Frame f) {
        Object left = eval(c.first(), f);
        for (int i = 0; i < c.ops().size(); i++) {
            Object right = eval(c.rest().get(i), f);
            if (!compareOne(c.ops().get(i), left, right)) {
                return false;
            }
            left = right;
        }
        return true;
    }

    boolean compareOne(String op, Object a, Object b) {
        return switch (op) {
            case "==" -> Py.eq(a, b);
            case "!=" -> !Py.eq(a, b);
            case "in" -> contains(b, a);
            case "notin" -> !contains(b, a);
            default -> {
                if (a instanceof Undefined u) {
                    throw u.error(line);
                }
                if (b instanceof Undefined u) {
                    throw u.error(line);
                }
                int r = Py.compare(a, b);
                yield switch (op) {
                    case "<" -> r < 0;
                    case "<=" -> r <= 0;
                    case ">" -> r > 0;
                    default -> r >= 0;
                };
            }
        };
    }

    boolean contains(Object container, Object item) {
        if (container instanceof String s) {
            if (!(item instanceof String sub)) {
                throw error("'in <string>' requires string as left operand, not " + Py.typeName(item));
            }
            return s.contains(sub);
        }
        if (container instanceof Map<?, ?> m) {
            for (Object k : m.keySet()) {
                if (Py.eq(k, item)) {
                    return true;
                }
            }
            return false;
        }
        if (container instanceof List<?> l) {
            for (Object x : l) {
                if (Py.eq(x, item)) {
                    return true;
                }
            }
            return false;
        }
        if (container instanceof Undefined) {
            return false;
        }
        throw error("argument of type '" + Py.typeName(container) + "' is not iterable");
    }

    // ---- attribute and item access (Jinja's sandboxed getattr / getitem) ----

    Object getAttr(Object obj, String name) {
        if (obj instanceof Undefined u) {
            throw u.error(line);
        }
        if (name.startsWith("_")) {
            return Undefined.attribute(obj, name);
        }
        Object method = Methods.bind(this, obj, name);
        if (method != null) {
            return method;
        }
        if (obj instanceof Map<?, ?> m) {
            return m.containsKey(name) ? m.get(name) : Undefined.attribute(obj, name);
        }
        if (obj instanceof Namespace ns) {
            return ns.attributes.containsKey(name) ? ns.attributes.get(name) : Undefined.attribute(obj, name);
        }
        if (obj instanceof LoopContext loop) {
            return loop.attribute(name);
        }
        return Undefined.attribute(obj, name);
    }

    static final Object MISSING = new Object();

    /** {@code m[key]} with Python key equality, or {@link #MISSING}. */
    Object getItemOrNull(Map<?, ?> m, Object key) {
        if (key instanceof String && m.containsKey(key)) {
            return m.get(key);
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (Py.eq(e.getKey(), key)) {
                return e.getValue();
            }
        }
        return MISSING;
    }

    Object getItem(Object obj, Object key) {
        if (obj instanceof Undefined u) {
            throw u.error(line);
        }
        if (obj instanceof Generator) {
            throw error("'generator' object is not subscriptable");
        }
        if (obj instanceof Map<?, ?> m) {
            Object v = getItemOrNull(m, key);
            if (v != MISSING) {
                return v;
            }
        } else if (obj instanceof String s && Py.isIntegral(key)) { // without a list of its characters
            long n = s.codePointCount(0, s.length());
            long i = Py.toLong(key);
            if (i < 0) {
                i += n;
            }
            if (i >= 0 && i < n) {
                return Character.toString(s.codePointAt(s.offsetByCodePoints(0, (int) i)));
            }
            return Undefined.element(obj, key);
        } else if (obj instanceof List<?> seq && Py.isIntegral(key)) {
            long i = Py.toLong(key);
            if (i < 0) {
                i += seq.size();
            }
            if (i >= 0 && i < seq.size()) {
                return seq.get((int) i);
            }
            return Undefined.element(obj, key);
        }
        return key instanceof String s ? getAttr(obj, s) : Undefined.element(obj, key);
    }

    private Object slice(Object obj, Object start, Object stop, Object step) {
        if (obj instanceof Undefined u) {
            throw u.error(line);
        }
        if (obj instanceof Generator) {
            throw error("'generator' object is not subscriptable");
        }
        boolean isString = obj instanceof String;
        int[] chars = isString ? ((String) obj).codePoints().toArray() : null;
        List<?> seq = obj instanceof List<?> l ? l : null;
        if (seq == null && chars == null) {
            throw error("'" + Py.typeName(obj) + "' object is not subscriptable");
        }
        long n = isString ? chars.length : seq.size();
        long st = step == null ? 1 : Py.toLong(step);
        if (st == 0) {
            throw error("slice step cannot be zero");
        }
        long lo;
        long hi;
        if (st > 0) {
            lo = start == null ? 0 : clampIndex(Py.toLong(start), n, 0, n);
            hi = stop == null ? n : clampIndex(Py.toLong(stop), n, 0, n);
        } else {
            lo = start == null ? n - 1 : clampIndex(Py.toLong(start), n, -1, n - 1);
            hi = stop == null ? -1 : clampIndex(Py.toLong(stop), n, -1, n - 1);
        }
        if (isString) {
            StringBuilder sb = new StringBuilder();
            for (long i = lo; st > 0 ? i < hi : i > hi; i += st) {
                sb.appendCodePoint(chars[(int) i]);
            }
            return sb.toString();
        }
        List<Object> out = new ArrayList<>();
        for (long i = lo; st > 0 ? i < hi : i > hi; i += st) {
            out.add(seq.get((int) i));
        }
        return out;
    }

    private static long clampIndex(long i, long n, long min, long max) {
        if (i < 0) {
            i += n;
        }
        return Math.max(min, Math.min(max, i));
    }

    /** Brings a Java value into the template's value model (see {@link Template}). */
    static Object fromJava(Object v) {
        if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Double
                || v instanceof Callable || v instanceof Undefined || v instanceof Namespace) {
            return v;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Float fl) {
            return fl.doubleValue();
        }
        if (v instanceof Character c) {
            return c.toString();
        }
        if (v instanceof Map<?, ?> m) {
            Map<Object, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(fromJava(k), fromJava(x)));
            return out;
        }
        if (v instanceof Iterable<?> it) {
            List<Object> out = new ArrayList<>();
            it.forEach(x -> out.add(fromJava(x)));
            return out;
        }
        if (v instanceof Object[] arr) {
            return fromJava(Arrays.asList(arr));
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        throw new IllegalArgumentException("a template cannot use a value of type " + v.getClass().getName());
    }

    /** A macro: its own scope per call, reading the scope it was defined in. */
    private record Macro(Node.Macro def, Frame definedIn) implements Callable {
        @Override
        public Object call(Runtime rt, List<Object> args, Map<String, Object> kwargs) {
            List<String> params = def.params();
            if (args.size() > params.size()) {
                throw rt.error("macro '" + def.name() + "' takes not more than " + params.size() + " argument(s)");
            }
            Frame f = new Frame(definedIn);
            int firstDefault = params.size() - def.defaults().size();
            for (int i = 0; i < params.size(); i++) {
                String p = params.get(i);
                if (i < args.size()) {
                    f.vars.put(p, args.get(i));
                } else if (kwargs.containsKey(p)) {
                    f.vars.put(p, kwargs.get(p));
                } else if (i >= firstDefault) {
                    f.vars.put(p, rt.eval(def.defaults().get(i - firstDefault), f));
                } else {
                    f.vars.put(p, Undefined.name(p));
                }
            }
            for (String k : kwargs.keySet()) {
                if (!params.contains(k)) {
                    throw rt.error("macro '" + def.name() + "' takes no keyword argument '" + k + "'");
                }
            }
            int saved = rt.line;
            StringBuilder out = new StringBuilder();
            rt.exec(def.body(), f, out);
            rt.line = saved;
            return out.toString();
        }

        @Override
        public String toString() {
            return "<Macro '" + def.name() + "'>";
        }
    }

    /** The {@code loop} variable of a for loop. */
    static final class LoopContext {
        final List<Object> items;
        int index0;
        private Object lastChanged = new Object();

        LoopContext(List<Object> items) {
            this.items = items;
        }

        Object attribute(String name) {
            int n = items.size();
            return switch (name) {
                case "index0" -> (long) index0;
                case "index" -> (long) index0 + 1;
                case "revindex0" -> (long) (n - index0 - 1);
                case "revindex" -> (long) (n - index0);
                case "first" -> index0 == 0;
                case "last" -> index0 == n - 1;
                case "length" -> (long) n;
                case "depth" -> 1L;
                case "depth0" -> 0L;
                case "previtem" -> index0 > 0 ? items.get(index0 - 1) : Undefined.anonymous();
                case "nextitem" -> index0 + 1 < n ? items.get(index0 + 1) : Undefined.anonymous();
                case "cycle" -> (Callable) (rt, a, kw) -> {
                    if (a.isEmpty()) {
                        throw rt.error("no items for cycling given");
                    }
                    return a.get(index0 % a.size());
                };
                case "changed" -> (Callable) (rt, a, kw) -> {
                    Object v = List.copyOf(a.stream().map(x -> x == null ? (Object) "\0none" : x).toList());
                    boolean changed = !Py.eq(v, lastChanged);
                    lastChanged = v;
                    return changed;
                };
                default -> Undefined.attribute(this, name);
            };
        }
    }
}
