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
     * Where the prefix cache should hold a request's state: {@code cuts}, where its prefill chunks may end, and
     * {@code later}, snapshots the backend takes after the request (so the prefill is not cut there).
     */
    record Boundaries(int[] cuts, int[] later) {}

    /**
     * Where later requests usually part from this one, for Qwen3.5's ChatML template. Every prefill chunk costs a
     * fixed time besides its tokens (each matrix decodes its weight rows once per chunk: about a quarter of a
     * second for the 0.8B on two AVX2 cores), so the new part of a prompt is cut as little as possible:
     * <ul>
     *   <li>{@code later}: the end of the last header ({@code <|im_start|>assistant\n}, the one the reply
     *       follows). A chat client re-sends the history with the reply in it, and the template renders that
     *       reply without the empty think block the generation prompt had, so the next turn shares this prompt
     *       up to there. Taken after the request, so a one-shot prompt or a chat turn is prefilled in one chunk.</li>
     *   <li>{@code cuts}: the end of the first header (the template's constant start, primed into the cache when
     *       the server starts, see {@link #primePrompts}), the end of a leading system message (shared by every
     *       conversation with that system prompt), and the ends of the assistant headers in the history (where
     *       earlier turns of this conversation left their snapshots: a prompt resumed from one of them is cut
     *       where the same prompt sent cold is).</li>
     * </ul>
     */
    Boundaries boundaries(int[] prompt) {
        if (imStart < 0) {
            return new Boundaries(new int[0], new int[0]);
        }
        java.util.List<int[]> headers = new java.util.ArrayList<>(); // {im_start position, header end, assistant?}
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] == imStart) {
                int end = headerEnd(prompt, i);
                headers.add(new int[] {i, end, end > 0 && isAssistantHeader(prompt, i, end) ? 1 : 0});
            }
        }
        java.util.TreeSet<Integer> cuts = new java.util.TreeSet<>();
        int[] later = new int[0];
        for (int h = 0; h < headers.size(); h++) {
            int[] header = headers.get(h);
            boolean lastHeader = h == headers.size() - 1;
            if (header[1] <= 0 || header[1] >= prompt.length) {
                continue;
            }
            if (lastHeader) {
                later = new int[] {header[1]};
            } else if (h == 0 && header[0] == 0) {
                cuts.add(header[1]);
            } else if (header[2] == 1 && h >= headers.size() - 1 - KEPT_ASSISTANT_HEADERS) {
                cuts.add(header[1]);
            }
        }
        if (headers.size() >= 2 && headers.get(0)[0] == 0 && isSystemHeader(prompt, 0, headers.get(0)[1])) {
            cuts.add(headers.get(1)[0]);
        }
        if (later.length == 1) {
            cuts.remove(later[0]);
        }
        return new Boundaries(cuts.stream().mapToInt(Integer::intValue).toArray(), later);
    }

    /**
     * The assistant headers of the history whose ends are cuts: the last few, where a re-sent conversation's
     * earlier turns left snapshots (a long history sent cold is not cut at every turn).
     */
    private static final int KEPT_ASSISTANT_HEADERS = 4;

    /** A header ({@code <|im_start|>} role newline) is looked for in this many tokens. */
    private static final int HEADER_TOKENS = 16;

    /** The position after the newline that ends the header at {@code start}, or -1. */
    private int headerEnd(int[] prompt, int start) {
        Tokenizer tokenizer = format.tokenizer();
        for (int j = start + 1; j < Math.min(prompt.length, start + HEADER_TOKENS); j++) {
            if (prompt[j] == imStart) {
                return -1;
            }
            if (tokenizer.hasToken(prompt[j]) && endsWithNewline(tokenizer.bytes(prompt[j]))) {
                return j + 1;
            }
        }
        return -1;
    }

    private boolean isAssistantHeader(int[] prompt, int start, int end) {
        return headerRole(prompt, start, end).equals("assistant");
    }

    private boolean isSystemHeader(int[] prompt, int start, int end) {
        return end > 0 && headerRole(prompt, start, end).equals("system");
    }

    private String headerRole(int[] prompt, int start, int end) {
        Tokenizer tokenizer = format.tokenizer();
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (int j = start + 1; j < end; j++) {
            if (tokenizer.hasToken(prompt[j])) {
                b.writeBytes(tokenizer.bytes(prompt[j]));
            }
        }
        return new String(b.toByteArray(), StandardCharsets.UTF_8).strip();
    }

    /**
     * Prompts whose states the server computes before its first request: the template's constant start for a
     * conversation without and with a system message (up to the end of the first header), so that a one-shot
     * prompt prefills only its own tokens. Empty when the template renders no ChatML headers.
     */
    java.util.List<int[]> primePrompts() {
        java.util.List<int[]> out = new java.util.ArrayList<>();
        for (java.util.List<java.util.Map<String, Object>> messages : java.util.List.of(
                java.util.List.<java.util.Map<String, Object>>of(java.util.Map.of("role", "user", "content", "Hello")),
                java.util.List.<java.util.Map<String, Object>>of(java.util.Map.of("role", "system", "content", "You are helpful."),
                        java.util.Map.of("role", "user", "content", "Hello")))) {
            int[] ids;
            try {
                ids = tokenizer().encode(dev.edgelm.chat.ChatPrompt.render(format.template(), messages, null,
                        java.util.Map.of("enable_thinking", false)).text());
            } catch (RuntimeException e) {
                continue; // a template that does not take these messages: nothing to prime
            }
            Boundaries b = boundaries(ids);
            if (b.cuts().length > 0 && b.cuts()[0] <= HEADER_TOKENS) {
                out.add(java.util.Arrays.copyOf(ids, b.cuts()[0]));
            }
        }
        return out;
    }

    /** Computes {@link #primePrompts} through the backend (each a one-token greedy generation), waiting for them. */
    public void prime() {
        dev.edgelm.engine.GenerationOptions greedy = dev.edgelm.engine.GenerationOptions.builder().temperature(0)
                .maxNewTokens(1).build();
        for (int[] p : primePrompts()) {
            try {
                backend.submit(new GenerationBackend.Request(p, new int[0], greedy, null, null)).join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

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
