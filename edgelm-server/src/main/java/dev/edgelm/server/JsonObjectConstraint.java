package dev.edgelm.server;

import dev.edgelm.engine.TokenConstraint;
import dev.edgelm.tokenizer.Tokenizer;

/**
 * {@code response_format: json_object}: the reply is one JSON object (RFC 8259), enforced token by token. A
 * byte-level pushdown recogniser of JSON follows the text; each step, every token whose bytes the recogniser
 * would reject is masked. Runs of whitespace between tokens of JSON are capped at {@value #MAX_WHITESPACE}
 * bytes (as llama.cpp's JSON grammar caps them) so a model cannot loop on blanks, and nesting at
 * {@value #MAX_DEPTH} levels. Stop tokens are allowed once the object is closed, and only then.
 *
 * <p>Written here rather than taken from a library: no maintained Java library masks a tokenizer's
 * vocabulary by a JSON grammar; a full JSON-schema grammar engine plugs into the same
 * {@link TokenConstraint} hook.
 */
public final class JsonObjectConstraint implements TokenConstraint {
    static final int MAX_DEPTH = 32;
    static final int MAX_WHITESPACE = 2;

    private final byte[][] vocabulary;
    private final boolean[] plain;
    private final Recogniser state = new Recogniser();
    private final Recogniser probe = new Recogniser();
    private final boolean[] firstByteOk = new boolean[256];
    /** Off in tests: every token walked, the reference for the shortcuts. */
    boolean shortcuts = true;

    /** The bytes of every token that is text (special tokens and missing ids: null), shared by all generations. */
    public static byte[][] vocabularyBytes(Tokenizer tokenizer, int modelVocab) {
        byte[][] out = new byte[modelVocab][];
        for (int id = 0; id < modelVocab; id++) {
            if (tokenizer.hasToken(id) && !tokenizer.isSpecial(id)) {
                byte[] b = tokenizer.bytes(id);
                out[id] = b.length == 0 ? null : b;
            }
        }
        return out;
    }

    public JsonObjectConstraint(byte[][] vocabulary) {
        this(vocabulary, plainStringTokens(vocabulary));
    }

    /** @param plain per token: its bytes may all stand inside a JSON string ({@link #plainStringTokens}) */
    public JsonObjectConstraint(byte[][] vocabulary, boolean[] plain) {
        this.vocabulary = vocabulary;
        this.plain = plain;
    }

    /**
     * The tokens whose bytes are all allowed inside a JSON string as they are (no quote, backslash or control
     * byte). Inside a string, the state a reply spends most of its tokens in, these are accepted without running
     * the recogniser: with a 248k vocabulary that turns the mask from a walk over every token's bytes into a flag
     * test for most of them.
     */
    public static boolean[] plainStringTokens(byte[][] vocabulary) {
        boolean[] out = new boolean[vocabulary.length];
        for (int id = 0; id < vocabulary.length; id++) {
            byte[] b = vocabulary[id];
            if (b == null) {
                continue;
            }
            boolean ok = true;
            for (byte x : b) {
                int c = x & 0xff;
                if (c < 0x20 || c == '"' || c == '\\') {
                    ok = false;
                    break;
                }
            }
            out[id] = ok;
        }
        return out;
    }

    /** Whether {@code text} is accepted from the start (for tests: a complete object when {@code canStop}). */
    boolean feedText(byte[] text) {
        for (byte b : text) {
            if (!state.feed(b)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void mask(float[] logits) {
        int n = Math.min(logits.length, vocabulary.length);
        boolean inString = shortcuts && state.mode == Mode.STRING;
        // a token whose first byte is refused is refused: 256 probes instead of a walk over most tokens
        for (int c = 0; c < 256; c++) {
            probe.copyFrom(state);
            firstByteOk[c] = !shortcuts || probe.feed((byte) c);
        }
        for (int id = 0; id < n; id++) {
            if (inString && plain[id]) {
                continue;
            }
            byte[] b = vocabulary[id];
            if (b == null || !firstByteOk[b[0] & 0xff] || !accepts(b)) {
                logits[id] = Float.NEGATIVE_INFINITY;
            }
        }
        for (int id = n; id < logits.length; id++) {
            logits[id] = Float.NEGATIVE_INFINITY;
        }
    }

    private boolean accepts(byte[] bytes) {
        probe.copyFrom(state);
        for (byte b : bytes) {
            if (!probe.feed(b)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void accept(int token) {
        byte[] b = token < vocabulary.length ? vocabulary[token] : null;
        if (b != null) {
            for (byte x : b) {
                state.feed(x);
            }
        }
    }

    @Override
    public boolean canStop() {
        return state.mode == Mode.DONE;
    }

    private enum Mode {
        START, VALUE, VALUE_OR_CLOSE, KEY_OR_CLOSE, KEY, COLON, AFTER, STRING, ESCAPE, UNICODE,
        MINUS, ZERO, INT, DOT, FRACTION, EXP, EXP_SIGN, EXP_DIGITS, LITERAL, DONE
    }

    private static final byte[][] LITERALS = {"true".getBytes(), "false".getBytes(), "null".getBytes()};

    /** The recogniser's whole state: small, so a copy per probed token is cheap. */
    private static final class Recogniser {
        final byte[] stack = new byte[MAX_DEPTH]; // 'O' object, 'A' array
        int depth;
        Mode mode = Mode.START;
        boolean key;
        int whitespace;
        int literal;
        int position; // in a literal, or hex digits of a \\u escape

        void copyFrom(Recogniser o) {
            System.arraycopy(o.stack, 0, stack, 0, o.depth);
            depth = o.depth;
            mode = o.mode;
            key = o.key;
            whitespace = o.whitespace;
            literal = o.literal;
            position = o.position;
        }

        boolean feed(byte b) {
            int c = b & 0xff;
            switch (mode) {
                case STRING -> {
                    if (c == '"') {
                        mode = key ? Mode.COLON : Mode.AFTER;
                    } else if (c == '\\') {
                        mode = Mode.ESCAPE;
                    } else if (c < 0x20) {
                        return false;
                    }
                    whitespace = 0;
                    return true;
                }
                case ESCAPE -> {
                    if (c == 'u') {
                        mode = Mode.UNICODE;
                        position = 0;
                        return true;
                    }
                    if ("\"\\/bfnrt".indexOf(c) >= 0) {
                        mode = Mode.STRING;
                        return true;
                    }
                    return false;
                }
                case UNICODE -> {
                    if (Character.digit(c, 16) < 0) {
                        return false;
                    }
                    if (++position == 4) {
                        mode = Mode.STRING;
                    }
                    return true;
                }
                case MINUS -> {
                    return digitStart(c);
                }
                case ZERO, INT, FRACTION, EXP_DIGITS -> {
                    if (mode != Mode.ZERO && c >= '0' && c <= '9') {
                        return true;
                    }
                    if (c == '.' && (mode == Mode.ZERO || mode == Mode.INT)) {
                        mode = Mode.DOT;
                        return true;
                    }
                    if ((c == 'e' || c == 'E') && mode != Mode.EXP_DIGITS) {
                        mode = Mode.EXP;
                        return true;
                    }
                    mode = Mode.AFTER; // the number ended: this byte follows it
                    return feed(b);
                }
                case DOT -> {
                    if (c >= '0' && c <= '9') {
                        mode = Mode.FRACTION;
                        return true;
                    }
                    return false;
                }
                case EXP -> {
                    if (c == '+' || c == '-') {
                        mode = Mode.EXP_SIGN;
                        return true;
                    }
                    if (c >= '0' && c <= '9') {
                        mode = Mode.EXP_DIGITS;
                        return true;
                    }
                    return false;
                }
                case EXP_SIGN -> {
                    if (c >= '0' && c <= '9') {
                        mode = Mode.EXP_DIGITS;
                        return true;
                    }
                    return false;
                }
                case LITERAL -> {
                    byte[] lit = LITERALS[literal];
                    if (c != lit[position]) {
                        return false;
                    }
                    if (++position == lit.length) {
                        mode = Mode.AFTER;
                    }
                    return true;
                }
                case DONE -> {
                    return false;
                }
                default -> {
                    // structural modes: whitespace, then the byte the mode expects
                }
            }
            if (c == ' ' || c == '\n' || c == '\t') {
                return ++whitespace <= MAX_WHITESPACE;
            }
            whitespace = 0;
            switch (mode) {
                case START -> {
                    return c == '{' && push('O', Mode.KEY_OR_CLOSE);
                }
                case VALUE, VALUE_OR_CLOSE -> {
                    if (c == ']' && mode == Mode.VALUE_OR_CLOSE) {
                        return pop();
                    }
                    return valueStart(c);
                }
                case KEY_OR_CLOSE, KEY -> {
                    if (c == '"') {
                        mode = Mode.STRING;
                        key = true;
                        return true;
                    }
                    return c == '}' && mode == Mode.KEY_OR_CLOSE && pop();
                }
                case COLON -> {
                    if (c == ':') {
                        mode = Mode.VALUE;
                        return true;
                    }
                    return false;
                }
                case AFTER -> {
                    byte top = stack[depth - 1];
                    if (c == ',') {
                        mode = top == 'O' ? Mode.KEY : Mode.VALUE;
                        return true;
                    }
                    if ((c == '}' && top == 'O') || (c == ']' && top == 'A')) {
                        return pop();
                    }
                    return false;
                }
                default -> {
                    return false;
                }
            }
        }

        private boolean valueStart(int c) {
            switch (c) {
                case '{' -> {
                    return push('O', Mode.KEY_OR_CLOSE);
                }
                case '[' -> {
                    return push('A', Mode.VALUE_OR_CLOSE);
                }
                case '"' -> {
                    mode = Mode.STRING;
                    key = false;
                    return true;
                }
                case '-' -> {
                    mode = Mode.MINUS;
                    return true;
                }
                case 't', 'f', 'n' -> {
                    literal = c == 't' ? 0 : c == 'f' ? 1 : 2;
                    position = 1;
                    mode = Mode.LITERAL;
                    return true;
                }
                default -> {
                    return digitStart(c);
                }
            }
        }

        private boolean digitStart(int c) {
            if (c == '0') {
                mode = Mode.ZERO;
                return true;
            }
            if (c >= '1' && c <= '9') {
                mode = Mode.INT;
                return true;
            }
            return false;
        }

        private boolean push(char kind, Mode next) {
            if (depth == MAX_DEPTH) {
                return false;
            }
            stack[depth++] = (byte) kind;
            mode = next;
            return true;
        }

        private boolean pop() {
            depth--;
            mode = depth == 0 ? Mode.DONE : Mode.AFTER;
            return true;
        }
    }
}
