package dev.edgelm.jinja;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits template source into text and tags with Jinja's white-space rules, {@code trim_blocks} and
 * {@code lstrip_blocks} on (as transformers sets them): {@code -} next to a delimiter strips all white space on
 * that side; the first newline after a block or comment tag is removed; spaces and tabs from the start of a line
 * up to a block or comment tag are removed ({@code +} turns either off for one tag). Newlines are normalized to
 * {@code \n} and one trailing newline of the source is dropped, as Jinja does by default.
 */
final class Lexer {
    enum Kind { TEXT, VAR, BLOCK }

    record Segment(Kind kind, String content, int line) {}

    private final String src;
    private final List<Segment> out = new ArrayList<>();
    private int pos;

    private Lexer(String source) {
        String s = source.replace("\r\n", "\n").replace('\r', '\n');
        if (s.endsWith("\n")) {
            s = s.substring(0, s.length() - 1);
        }
        this.src = s;
    }

    static List<Segment> lex(String source) {
        Lexer l = new Lexer(source);
        l.run();
        return l.out;
    }

    // lineAt is asked in increasing order of index: counting on from the last answer keeps lexing linear
    // (counting from the start each time made a 300 KB template of tags take minutes)
    private int countedTo;
    private int countedLine = 1;

    private int lineAt(int index) {
        int target = Math.min(index, src.length());
        if (target < countedTo) {
            countedTo = 0;
            countedLine = 1;
        }
        for (int i = countedTo; i < target; i++) {
            if (src.charAt(i) == '\n') {
                countedLine++;
            }
        }
        countedTo = target;
        return countedLine;
    }

    private void run() {
        boolean lineStarting = true;
        while (pos < src.length()) {
            int open = nextOpener(pos);
            if (open < 0) {
                out.add(new Segment(Kind.TEXT, src.substring(pos), lineAt(pos)));
                return;
            }
            char type = src.charAt(open + 1);
            int afterOpen = open + 2;
            char sign = afterOpen < src.length() ? src.charAt(afterOpen) : 0;
            String text = src.substring(pos, open);
            if (sign == '-') {
                text = Py.rstrip(text, null);
                afterOpen++;
            } else {
                if (sign == '+') {
                    afterOpen++;
                }
                if (sign != '+' && type != '{') {
                    int lpos = text.lastIndexOf('\n') + 1;
                    if ((lpos > 0 || lineStarting) && onlyBlanks(text, lpos)) {
                        text = text.substring(0, lpos);
                    }
                }
            }
            if (!text.isEmpty()) {
                out.add(new Segment(Kind.TEXT, text, lineAt(pos)));
            }
            int line = lineAt(open);
            String close = type == '{' ? "}}" : type == '%' ? "%}" : "#}";
            int end = type == '#' ? src.indexOf(close, afterOpen) : findClose(afterOpen, close);
            if (end < 0) {
                throw new TemplateException("tag opened with '{" + type + "' is never closed", line);
            }
            int contentEnd = end;
            char endSign = end > afterOpen ? src.charAt(end - 1) : 0;
            if (endSign == '-' || endSign == '+') {
                contentEnd--;
            }
            String content = src.substring(afterOpen, Math.max(afterOpen, contentEnd));
            pos = end + 2;
            if (type == '%' && content.strip().equals("raw")) {
                lineStarting = raw(line, endSign);
                continue;
            }
            if (type != '#') {
                out.add(new Segment(type == '{' ? Kind.VAR : Kind.BLOCK, content, line));
            }
            lineStarting = afterTag(type, endSign);
        }
    }

    /** Consumes what follows a tag's end by the white-space rules; returns whether the consumed text ends a line. */
    private boolean afterTag(char type, char endSign) {
        if (endSign == '-') {
            int start = pos;
            while (pos < src.length() && Py.isSpace(src.charAt(pos))) {
                pos++;
            }
            return pos > start && src.charAt(pos - 1) == '\n';
        }
        if (type != '{' && endSign != '+' && pos < src.length() && src.charAt(pos) == '\n') {
            pos++;
            return true;
        }
        return false;
    }

    /** {@code {% raw %}...{% endraw %}}: the text in between is output as it is. */
    private boolean raw(int line, char endSign) {
        afterTag('%', endSign);
        int search = pos;
        while (true) {
            int open = src.indexOf("{%", search);
            if (open < 0) {
                throw new TemplateException("'raw' block is never closed", line);
            }
            int close = src.indexOf("%}", open + 2); // not the "%}" of "{%}" itself
            if (close < 0) {
                throw new TemplateException("'raw' block is never closed", line);
            }
            String inner = src.substring(open + 2, close);
            String word = inner.replaceAll("^[-+]?\\s*|\\s*[-+]?$", "");
            if (word.equals("endraw")) {
                String text = src.substring(pos, open);
                if (inner.startsWith("-")) {
                    text = Py.rstrip(text, null);
                }
                if (!text.isEmpty()) {
                    out.add(new Segment(Kind.TEXT, text, line));
                }
                pos = close + 2;
                return afterTag('%', inner.endsWith("-") ? '-' : inner.endsWith("+") ? '+' : 0);
            }
            search = open + 2; // the next "{%" may be inside this one's text
        }
    }

    private int nextOpener(int from) {
        int i = src.indexOf('{', from);
        while (i >= 0 && i + 1 < src.length()) {
            char c = src.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
            i = src.indexOf('{', i + 1);
        }
        return -1;
    }

    /** The index of {@code close} after {@code from}, skipping string literals. */
    private int findClose(int from, String close) {
        int i = from;
        while (i < src.length()) {
            char c = src.charAt(i);
            if (c == '\'' || c == '"') {
                i++;
                while (i < src.length() && src.charAt(i) != c) {
                    i += src.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
            } else if (src.startsWith(close, i)) {
                return i;
            } else {
                i++;
            }
        }
        return -1;
    }

    private static boolean onlyBlanks(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n' || !Py.isSpace(c)) {
                return false;
            }
        }
        return true;
    }
}
