package dev.edgelm.server;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.tokenizer.Tokenizer;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;

/**
 * What the server serves: a loaded engine, its chat format, the backend that runs generations, and the
 * name clients know it by. Closing it closes the backend (draining it) and then the engine.
 */
public final class ServedModel implements AutoCloseable {
    private final String id;
    private final Engine engine;
    private final ChatFormat format;
    private final GenerationBackend backend;
    private final TokenDecoder decoder;
    private final int contextLength;
    private final int imStart;
    private final long created = System.currentTimeMillis() / 1000;
    private volatile byte[][] vocabularyBytes;
    private dev.edgelm.grammar.Vocabulary grammarVocabulary;
    private volatile boolean[] plainTokens;

    public ServedModel(String id, Engine engine, ChatFormat format, GenerationBackend backend) {
        this.id = id;
        this.engine = engine;
        this.format = format;
        this.backend = backend;
        this.contextLength = engine.options().maxNumTokens();
        Tokenizer tokenizer = format.tokenizer();
        OptionalInt start = tokenizer.id("<|im_start|>");
        this.imStart = start.orElse(-1);
        this.decoder = () -> {
            IncrementalDecoder d = tokenizer.newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int token) {
                    // a model's padding rows (ids past the vocabulary) can be sampled: they have no text
                    return tokenizer.hasToken(token) ? d.accept(token) : "";
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
    }

    public String id() {
        return id;
    }

    public Engine engine() {
        return engine;
    }

    public ChatFormat format() {
        return format;
    }

    public Tokenizer tokenizer() {
        return format.tokenizer();
    }

    public GenerationBackend backend() {
        return backend;
    }

    /** Text of generated tokens, special tokens skipped. */
    public TokenDecoder decoder() {
        return decoder;
    }

    /** Tokens one request may hold: prompt and reply together. */
    public int contextLength() {
        return contextLength;
    }

    public long created() {
        return created;
    }

    /**
     * Where later requests usually part from this one: each {@code <|im_start|>} of the last messages of the
     * prompt, and the end of the header line after it ({@code <|im_start|>assistant\n}). A chat client re-sends the history with the
     * reply in it, and Qwen3.5's template renders that reply without the empty think block the generation
     * prompt had, so the next request shares this one's prompt up to the end of its last header. Since every
     * request is cut at the same kind of positions, a prompt resumed from a snapshot is prefilled in the same
     * chunks as the same prompt from scratch.
     */
    int[] boundaries(int[] prompt) {
        if (imStart < 0) {
            return new int[0];
        }
        Tokenizer tokenizer = format.tokenizer();
        int n = 0;
        int[] out = new int[prompt.length];
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] != imStart) {
                continue;
            }
            if (i > 0) {
                out[n++] = i;
            }
            for (int j = i + 1; j < Math.min(prompt.length, i + HEADER_TOKENS); j++) {
                if (prompt[j] == imStart) {
                    break;
                }
                if (tokenizer.hasToken(prompt[j]) && endsWithNewline(tokenizer.bytes(prompt[j]))) {
                    if (j + 1 < prompt.length) {
                        out[n++] = j + 1;
                    }
                    break;
                }
            }
        }
        // only the last ones: a snapshot costs the whole recurrent state (18 MiB for the 0.8B) and each boundary
        // ends a prefill chunk, so a long history sent cold is not cut at every message; a re-sent conversation
        // parts from the previous request at its last assistant header, the fifth position from the end
        return java.util.Arrays.copyOfRange(out, Math.max(0, n - KEPT_BOUNDARIES), n);
    }

    /** Boundaries passed on per request: those of the last four messages. */
    private static final int KEPT_BOUNDARIES = 8;

    /** A header ({@code <|im_start|>} role newline) is looked for in this many tokens. */
    private static final int HEADER_TOKENS = 8;

    private static boolean endsWithNewline(byte[] b) {
        return b.length > 0 && b[b.length - 1] == '\n';
    }

    /** The bytes of each text token, for constrained decoding (computed on first use). */
    byte[][] vocabularyBytes() {
        byte[][] v = vocabularyBytes;
        if (v == null) {
            v = JsonObjectConstraint.vocabularyBytes(format.tokenizer(), engine.config().vocabSize());
            plainTokens = JsonObjectConstraint.plainStringTokens(v);
            vocabularyBytes = v;
        }
        return v;
    }

    /** The vocabulary as the grammar's token mask walks it (built on first use, then shared by every request). */
    synchronized dev.edgelm.grammar.Vocabulary grammarVocabulary() {
        if (grammarVocabulary == null) {
            grammarVocabulary = dev.edgelm.grammar.Vocabulary.of(format.tokenizer(), engine.config().vocabSize());
        }
        return grammarVocabulary;
    }

    /** {@link JsonObjectConstraint#plainStringTokens} of {@link #vocabularyBytes()}. */
    boolean[] plainTokens() {
        vocabularyBytes();
        return plainTokens;
    }

    /** A token's text, or null when its bytes are not valid UTF-8 on their own. */
    String pieceOrNull(int token) {
        if (!tokenizer().hasToken(token)) {
            return "";
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(tokenizer().bytes(token))).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    byte[] bytes(int token) {
        return tokenizer().hasToken(token) ? tokenizer().bytes(token) : new byte[0];
    }

    @Override
    public void close() {
        try {
            backend.close();
        } finally {
            engine.close();
        }
    }
}
