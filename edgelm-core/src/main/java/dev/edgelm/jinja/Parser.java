package dev.edgelm.jinja;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Parses lexed segments into statements, with Jinja's expression grammar and operator precedence. */
final class Parser {
    private enum T { NAME, STRING, INT, FLOAT, OP, END }

    private record Tok(T type, String text, Object value) {
        boolean is(String op) {
            return (type == T.OP || type == T.NAME) && text.equals(op);
        }
    }

    private static final Set<String> COMPARE = Set.of("==", "!=", "<", "<=", ">", ">=");

    private final List<Lexer.Segment> segments;
    private int seg;
    // the current tag's tokens
    private List<Tok> toks;
    private int tp;
    private int line;
    private final int maxNesting;
    private int nesting;

    private Parser(List<Lexer.Segment> segments, int maxNesting) {
        this.segments = segments;
        this.maxNesting = maxNesting;
    }

    static List<Node> parse(List<Lexer.Segment> segments, Limits limits) {
        Parser p = new Parser(segments, limits.maxNesting());
        List<Node> body = p.parseBody(Set.of());
        if (p.seg < segments.size()) {
            Lexer.Segment s = segments.get(p.seg);
            throw new TemplateException("unexpected '{% " + s.content().strip() + " %}'", s.line());
        }
        return body;
    }

    /** Parses statements until a block tag whose first word is in {@code enders} (left unconsumed) or the end. */
    private List<Node> parseBody(Set<String> enders) {
        deeper();
        try {
            return parseBodyAtThisLevel(enders);
        } finally {
            nesting--;
        }
    }

    /** One more level of nesting (a block, a parenthesised or prefixed expression), refused past the limit. */
    private void deeper() {
        if (++nesting > maxNesting) {
            throw new TemplateException("blocks or expressions nested deeper than " + maxNesting
                    + " levels (the sandbox's limit)", line);
        }
    }

    private List<Node> parseBodyAtThisLevel(Set<String> enders) {
        List<Node> nodes = new ArrayList<>();
        while (seg < segments.size()) {
            Lexer.Segment s = segments.get(seg);
            line = s.line();
            switch (s.kind()) {
                case TEXT -> {
                    nodes.add(new Node.Text(s.content()));
                    seg++;
                }
                case VAR -> {
                    startTag(s);
                    Expr e = parseExpression();
                    expectEnd();
                    nodes.add(new Node.Output(e, s.line()));
                    seg++;
                }
                case BLOCK -> {
                    startTag(s);
                    Tok first = toks.get(0);
                    if (first.type != T.NAME) {
                        throw error("a block tag must start with a statement name");
                    }
                    if (enders.contains(first.text)) {
                        return nodes;
                    }
                    seg++;
                    tp = 1;
                    nodes.add(statement(first.text, s.line()));
                }
            }
        }
        if (!enders.isEmpty()) {
            throw new TemplateException("unexpected end of template: missing '{% " + String.join(" %}' or '{% ", enders.stream().sorted().toList()) + " %}'", line);
        }
        return nodes;
    }

    private Node statement(String name, int at) {
        switch (name) {
            case "if" -> {
                List<Expr> conds = new ArrayList<>();
                List<List<Node>> bodies = new ArrayList<>();
                conds.add(parseExpression());
                expectEnd();
                List<Node> otherwise = List.of();
                while (true) {
                    bodies.add(parseBody(Set.of("elif", "else", "endif")));
                    String word = closingWord();
                    if (word.equals("elif")) {
                        conds.add(parseExpression());
                        expectEnd();
                    } else if (word.equals("else")) {
                        expectEnd();
                        otherwise = bodyUntil("endif");
                        break;
                    } else {
                        expectEnd();
                        break;
                    }
                }
                return new Node.If(conds, bodies, otherwise, at);
            }
            case "for" -> {
                Node.Target target = parseTarget(false);
                expectName("in");
                Expr iterable = parseExpression(false);
                Expr filter = null;
                if (peek().is("if")) {
                    tp++;
                    filter = parseExpression(false);
                }
                if (peek().is("recursive")) {
                    throw error("recursive loops are not supported");
                }
                expectEnd();
                List<Node> body = parseBody(Set.of("else", "endfor"));
                List<Node> otherwise = List.of();
                if (closingWord().equals("else")) {
                    expectEnd();
                    otherwise = parseBody(Set.of("endfor"));
                    closingWord();
                }
                expectEnd();
                return new Node.For(target, iterable, filter, body, otherwise, at);
            }
            case "set" -> {
                Node.Target target = parseTarget(true);
                if (peek().is("=")) {
                    tp++;
                    Expr value = parseTupleOrExpression();
                    expectEnd();
                    return new Node.Set(target, value, at);
                }
                expectEnd();
                return new Node.SetBlock(target, bodyUntil("endset"), at);
            }
            case "macro" -> {
                String macroName = expectName(null);
                expectOp("(");
                List<String> params = new ArrayList<>();
                List<Expr> defaults = new ArrayList<>();
                while (!peek().is(")")) {
                    if (!params.isEmpty()) {
                        expectOp(",");
                        if (peek().is(")")) {
                            break;
                        }
                    }
                    params.add(expectName(null));
                    if (peek().is("=")) {
                        tp++;
                        defaults.add(parseExpression());
                    } else {
                        if (!defaults.isEmpty()) {
                            throw error("a macro parameter without default follows one with a default");
                        }
                    }
                }
                tp++;
                expectEnd();
                return new Node.Macro(macroName, params, defaults, bodyUntil("endmacro"), at);
            }
            case "break" -> {
                expectEnd();
                return new Node.Break(at);
            }
            case "continue" -> {
                expectEnd();
                return new Node.Continue(at);
            }
            case "generation" -> {
                // transformers' marker of assistant text for masks; it renders its body unchanged
                expectEnd();
                return new Node.If(List.of(new Expr.Literal(true)), List.of(bodyUntil("endgeneration")), List.of(), at);
            }
            case "filter" -> {
                Expr chain = new Expr.Name(Node.FilterBlock.BODY);
                do {
                    String filterName = dottedName();
                    Expr.Args args = Expr.Args.NONE;
                    if (peek().is("(") && peek().type == T.OP) {
                        tp++;
                        args = parseArgs();
                    }
                    chain = new Expr.Filter(chain, filterName, args);
                } while (peek().is("|") && peek().type == T.OP && tp++ >= 0);
                expectEnd();
                return new Node.FilterBlock(chain, bodyUntil("endfilter"), at);
            }
            case "call", "include", "import", "from", "extends", "block", "with", "autoescape", "do", "trans" ->
                    throw error("'" + name + "' tags are not supported (EdgeLM's Jinja engine has no " + name + " blocks)");
            default -> throw error("unknown tag '" + name + "'");
        }
    }

    /** The statements up to {@code {% ender %}}, consuming that tag. */
    private List<Node> bodyUntil(String ender) {
        List<Node> body = parseBody(Set.of(ender));
        closingWord();
        expectEnd();
        return body;
    }

    /** Consumes the closing tag parseBody stopped at and returns its first word. */
    private String closingWord() {
        Lexer.Segment s = segments.get(seg);
        startTag(s);
        tp = 1;
        seg++;
        return toks.get(0).text;
    }

    private Node.Target parseTarget(boolean allowAttribute) {
        String first = expectName(null);
        if (allowAttribute && peek().is(".")) {
            tp++;
            return new Node.Target.Attribute(first, expectName(null));
        }
        if (!peek().is(",")) {
            return new Node.Target.Name(first);
        }
        List<String> names = new ArrayList<>(List.of(first));
        while (peek().is(",")) {
            tp++;
            if (peek().type != T.NAME) {
                break;
            }
            names.add(expectName(null));
        }
        return new Node.Target.Tuple(names);
    }

    // ---- expressions ----

    private Expr parseTupleOrExpression() {
        Expr first = parseExpression();
        if (!peek().is(",")) {
            return first;
        }
        List<Expr> items = new ArrayList<>(List.of(first));
        while (peek().is(",")) {
            tp++;
            if (atEnd()) {
                break;
            }
            items.add(parseExpression());
        }
        return new Expr.TupleLiteral(items);
    }

    private Expr parseExpression() {
        return parseExpression(true);
    }

    private Expr parseExpression(boolean withConditional) {
        deeper();
        try {
            return parseExpressionAtThisLevel(withConditional);
        } finally {
            nesting--;
        }
    }

    private Expr parseExpressionAtThisLevel(boolean withConditional) {
        Expr e = parseOr();
        if (withConditional) {
            while (peek().is("if")) {
                tp++;
                Expr cond = parseOr();
                Expr otherwise = null;
                if (peek().is("else")) {
                    tp++;
                    otherwise = parseExpression();
                }
                e = new Expr.Conditional(cond, e, otherwise);
            }
        }
        return e;
    }

    private Expr parseOr() {
        Expr left = parseAnd();
        while (peek().is("or")) {
            tp++;
            left = new Expr.Binary("or", left, parseAnd());
        }
        return left;
    }

    private Expr parseAnd() {
        Expr left = parseNot();
        while (peek().is("and")) {
            tp++;
            left = new Expr.Binary("and", left, parseNot());
        }
        return left;
    }

    private Expr parseNot() {
        if (peek().is("not")) {
            tp++;
            deeper();
            try {
                return new Expr.Unary("not", parseNot());
            } finally {
                nesting--;
            }
        }
        return parseCompare();
    }

    private Expr parseCompare() {
        Expr first = parseMath1();
        List<String> ops = new ArrayList<>();
        List<Expr> rest = new ArrayList<>();
        while (true) {
            Tok t = peek();
            if (t.type == T.OP && COMPARE.contains(t.text)) {
                tp++;
                ops.add(t.text);
            } else if (t.is("in")) {
                tp++;
                ops.add("in");
            } else if (t.is("not") && peekAt(1).is("in")) {
                tp += 2;
                ops.add("notin");
            } else {
                break;
            }
            rest.add(parseMath1());
        }
        return ops.isEmpty() ? first : new Expr.Compare(first, ops, rest);
    }

    private Expr parseMath1() {
        Expr left = parseConcat();
        while (peek().type == T.OP && (peek().text.equals("+") || peek().text.equals("-"))) {
            String op = next().text;
            left = new Expr.Binary(op, left, parseConcat());
        }
        return left;
    }

    private Expr parseConcat() {
        Expr left = parseMath2();
        while (peek().is("~")) {
            tp++;
            left = new Expr.Binary("~", left, parseMath2());
        }
        return left;
    }

    private Expr parseMath2() {
        Expr left = parsePow();
        while (peek().type == T.OP && Set.of("*", "/", "//", "%").contains(peek().text)) {
            String op = next().text;
            left = new Expr.Binary(op, left, parsePow());
        }
        return left;
    }

    private Expr parsePow() {
        Expr left = parseUnary(true);
        while (peek().is("**")) {
            tp++;
            left = new Expr.Binary("**", left, parseUnary(true));
        }
        return left;
    }

    private Expr parseUnary(boolean withFilter) {
        Expr node;
        if (peek().is("-") && peek().type == T.OP) {
            tp++;
            deeper();
            node = new Expr.Unary("-", parseUnary(false));
            nesting--;
        } else if (peek().is("+") && peek().type == T.OP) {
            tp++;
            deeper();
            node = new Expr.Unary("+", parseUnary(false));
            nesting--;
        } else {
            node = parsePrimary();
        }
        node = parsePostfix(node);
        return withFilter ? parseFilterExpr(node) : node;
    }

    private Expr parsePrimary() {
        Tok t = next();
        switch (t.type) {
            case STRING -> {
                StringBuilder sb = new StringBuilder((String) t.value);
                while (peek().type == T.STRING) { // adjacent literals concatenate
                    sb.append((String) next().value);
                }
                return new Expr.Literal(sb.toString());
            }
            case INT, FLOAT -> {
                return new Expr.Literal(t.value);
            }
            case NAME -> {
                return switch (t.text) {
                    case "true", "True" -> new Expr.Literal(Boolean.TRUE);
                    case "false", "False" -> new Expr.Literal(Boolean.FALSE);
                    case "none", "None" -> new Expr.Literal(null);
                    default -> new Expr.Name(t.text);
                };
            }
            case OP -> {
                if (t.text.equals("(")) {
                    if (peek().is(")")) {
                        tp++;
                        return new Expr.TupleLiteral(List.of());
                    }
                    Expr e = parseExpression();
                    if (peek().is(",")) {
                        List<Expr> items = new ArrayList<>(List.of(e));
                        while (peek().is(",")) {
                            tp++;
                            if (peek().is(")")) {
                                break;
                            }
                            items.add(parseExpression());
                        }
                        e = new Expr.TupleLiteral(items);
                    }
                    expectOp(")");
                    return e;
                }
                if (t.text.equals("[")) {
                    List<Expr> items = new ArrayList<>();
                    while (!peek().is("]")) {
                        if (!items.isEmpty()) {
                            expectOp(",");
                            if (peek().is("]")) {
                                break;
                            }
                        }
                        items.add(parseExpression());
                    }
                    tp++;
                    return new Expr.ListLiteral(items);
                }
                if (t.text.equals("{")) {
                    List<Expr> keys = new ArrayList<>();
                    List<Expr> values = new ArrayList<>();
                    while (!peek().is("}")) {
                        if (!keys.isEmpty()) {
                            expectOp(",");
                            if (peek().is("}")) {
                                break;
                            }
                        }
                        keys.add(parseExpression());
                        expectOp(":");
                        values.add(parseExpression());
                    }
                    tp++;
                    return new Expr.DictLiteral(keys, values);
                }
                throw error("unexpected '" + t.text + "'");
            }
            default -> throw error("unexpected end of expression");
        }
    }

    private Expr parsePostfix(Expr node) {
        while (true) {
            Tok t = peek();
            if (t.is(".") && t.type == T.OP) {
                tp++;
                Tok name = next();
                if (name.type == T.NAME) {
                    node = new Expr.GetAttr(node, name.text);
                } else if (name.type == T.INT) {
                    node = new Expr.GetItem(node, new Expr.Literal(name.value));
                } else {
                    throw error("expected an attribute name after '.'");
                }
            } else if (t.is("[") && t.type == T.OP) {
                tp++;
                node = parseSubscript(node);
            } else if (t.is("(") && t.type == T.OP) {
                tp++;
                node = new Expr.Call(node, parseArgs());
            } else {
                return node;
            }
        }
    }

    private Expr parseSubscript(Expr node) {
        Expr[] parts = new Expr[3];
        int part = 0;
        boolean slice = false;
        while (!peek().is("]")) {
            if (peek().is(":")) {
                tp++;
                slice = true;
                part++;
                if (part > 2) {
                    throw error("too many ':' in a slice");
                }
                continue;
            }
            if (parts[part] != null) {
                throw error("expected ']'");
            }
            parts[part] = parseExpression();
        }
        tp++;
        if (!slice) {
            if (parts[0] == null) {
                throw error("empty subscript");
            }
            return new Expr.GetItem(node, parts[0]);
        }
        return new Expr.Slice(node, parts[0], parts[1], parts[2]);
    }

    /** Arguments after '(' up to and including ')'. */
    private Expr.Args parseArgs() {
        List<Expr> positional = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Expr> named = new ArrayList<>();
        boolean first = true;
        while (!peek().is(")")) {
            if (!first) {
                expectOp(",");
                if (peek().is(")")) {
                    break;
                }
            }
            first = false;
            if (peek().type == T.NAME && peekAt(1).is("=") && peekAt(1).type == T.OP) {
                names.add(next().text);
                tp++;
                named.add(parseExpression());
            } else {
                if (!names.isEmpty()) {
                    throw error("a positional argument follows a keyword argument");
                }
                positional.add(parseExpression());
            }
        }
        tp++;
        return new Expr.Args(positional, names, named);
    }

    private Expr parseFilterExpr(Expr node) {
        while (true) {
            Tok t = peek();
            if (t.is("|") && t.type == T.OP) {
                tp++;
                String name = dottedName();
                Expr.Args args = Expr.Args.NONE;
                if (peek().is("(") && peek().type == T.OP) {
                    tp++;
                    args = parseArgs();
                }
                node = new Expr.Filter(node, name, args);
            } else if (t.is("is") && t.type == T.NAME) {
                tp++;
                boolean negated = false;
                if (peek().is("not") && peek().type == T.NAME) {
                    tp++;
                    negated = true;
                }
                String name = dottedName();
                Expr.Args args = Expr.Args.NONE;
                Tok a = peek();
                if (a.is("(") && a.type == T.OP) {
                    tp++;
                    args = parseArgs();
                } else if ((a.type == T.NAME || a.type == T.STRING || a.type == T.INT || a.type == T.FLOAT
                        || (a.type == T.OP && (a.text.equals("[") || a.text.equals("{"))))
                        && !a.is("else") && !a.is("or") && !a.is("and")) {
                    if (a.is("is")) {
                        throw error("tests cannot be chained with 'is'");
                    }
                    args = new Expr.Args(List.of(parsePostfix(parsePrimary())), List.of(), List.of());
                }
                node = new Expr.Test(node, name, args, negated);
            } else if (t.is("(") && t.type == T.OP) {
                tp++;
                node = new Expr.Call(node, parseArgs());
            } else {
                return node;
            }
        }
    }

    private String dottedName() {
        StringBuilder sb = new StringBuilder(expectName(null));
        while (peek().is(".") && peekAt(1).type == T.NAME) {
            tp++;
            sb.append('.').append(next().text);
        }
        return sb.toString();
    }

    // ---- token helpers ----

    private void startTag(Lexer.Segment s) {
        line = s.line();
        toks = tokenize(s.content());
        tp = 0;
        if (toks.size() == 1) {
            throw error(s.kind() == Lexer.Kind.VAR ? "empty expression" : "empty block tag");
        }
    }

    private Tok peek() {
        return toks.get(tp);
    }

    private Tok peekAt(int ahead) {
        return toks.get(Math.min(tp + ahead, toks.size() - 1));
    }

    private Tok next() {
        Tok t = toks.get(tp);
        if (t.type != T.END) {
            tp++;
        }
        return t;
    }

    private boolean atEnd() {
        return peek().type == T.END;
    }

    private void expectEnd() {
        if (!atEnd()) {
            throw error("unexpected '" + peek().text + "'");
        }
    }

    private void expectOp(String op) {
        Tok t = next();
        if (!(t.type == T.OP && t.text.equals(op))) {
            throw error("expected '" + op + "' but found " + (t.type == T.END ? "the end of the tag" : "'" + t.text + "'"));
        }
    }

    private String expectName(String word) {
        Tok t = next();
        if (t.type != T.NAME || (word != null && !t.text.equals(word))) {
            throw error("expected " + (word == null ? "a name" : "'" + word + "'") + " but found "
                    + (t.type == T.END ? "the end of the tag" : "'" + t.text + "'"));
        }
        return t.text;
    }

    private TemplateException error(String message) {
        return new TemplateException("syntax error: " + message, line);
    }

    private static final String[] OPS = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "(", ")", "[", "]",
        "{", "}", ",", ".", ":", "|", "=", "<", ">"};

    private List<Tok> tokenize(String s) {
        List<Tok> out = new ArrayList<>();
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (Py.isSpace(c)) {
                i++;
            } else if (c == '\'' || c == '"') {
                int j = i + 1;
                StringBuilder raw = new StringBuilder();
                while (j < n && s.charAt(j) != c) {
                    if (s.charAt(j) == '\\' && j + 1 < n) {
                        raw.append(s, j, j + 2);
                        j += 2;
                    } else {
                        raw.append(s.charAt(j++));
                    }
                }
                if (j >= n) {
                    throw error("unterminated string");
                }
                out.add(new Tok(T.STRING, s.substring(i, j + 1), unescape(raw.toString())));
                i = j + 1;
            } else if (Character.isDigit(c)) {
                int j = i;
                while (j < n && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_')) {
                    j++;
                }
                boolean isFloat = false;
                if (j + 1 < n && s.charAt(j) == '.' && Character.isDigit(s.charAt(j + 1))) {
                    isFloat = true;
                    j++;
                    while (j < n && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_')) {
                        j++;
                    }
                }
                if (j < n && (s.charAt(j) == 'e' || s.charAt(j) == 'E')) {
                    int k = j + 1;
                    if (k < n && (s.charAt(k) == '+' || s.charAt(k) == '-')) {
                        k++;
                    }
                    if (k < n && Character.isDigit(s.charAt(k))) {
                        isFloat = true;
                        j = k;
                        while (j < n && Character.isDigit(s.charAt(j))) {
                            j++;
                        }
                    }
                }
                String text = s.substring(i, j).replace("_", "");
                long value = 0;
                if (!isFloat) {
                    try {
                        value = Long.parseLong(text);
                    } catch (NumberFormatException e) { // Python's integers have no bound, EdgeLM's have 64 bits
                        throw error("integer literal " + text + " is not supported: it does not fit 64 bits");
                    }
                }
                out.add(isFloat ? new Tok(T.FLOAT, text, Double.parseDouble(text)) : new Tok(T.INT, text, value));
                i = j;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i;
                while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
                    j++;
                }
                out.add(new Tok(T.NAME, s.substring(i, j), null));
                i = j;
            } else {
                String op = null;
                for (String o : OPS) {
                    if (s.startsWith(o, i)) {
                        op = o;
                        break;
                    }
                }
                if (op == null) {
                    throw error("unexpected character '" + c + "'");
                }
                out.add(new Tok(T.OP, op, null));
                i += op.length();
            }
        }
        out.add(new Tok(T.END, "", null));
        return out;
    }

    /** Python string-literal escapes, as Jinja decodes its string literals. */
    private String unescape(String raw) {
        StringBuilder sb = new StringBuilder(raw.length());
        int n = raw.length();
        for (int i = 0; i < n; i++) {
            char c = raw.charAt(i);
            if (c != '\\' || i + 1 >= n) {
                sb.append(c);
                continue;
            }
            char e = raw.charAt(++i);
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'v' -> sb.append('\u000B');
                case 'a' -> sb.append('\u0007');
                case '\\', '\'', '"' -> sb.append(e);
                case '\n' -> { }
                case 'x', 'u', 'U' -> {
                    int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    if (i + len >= n) {
                        throw error("truncated \\" + e + " escape");
                    }
                    try {
                        sb.appendCodePoint(Integer.parseInt(raw.substring(i + 1, i + 1 + len), 16));
                    } catch (RuntimeException ex) {
                        throw error("bad \\" + e + " escape");
                    }
                    i += len;
                }
                default -> {
                    if (e >= '0' && e <= '7') {
                        int j = i;
                        while (j < n && j < i + 3 && raw.charAt(j) >= '0' && raw.charAt(j) <= '7') {
                            j++;
                        }
                        sb.append((char) Integer.parseInt(raw.substring(i, j), 8));
                        i = j - 1;
                    } else {
                        sb.append('\\').append(e);
                    }
                }
            }
        }
        return sb.toString();
    }
}
