package dev.edgelm.tokenizer;

import dev.edgelm.util.EdgeLmException;
import java.text.Normalizer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A byte-level BPE tokenizer that encodes and decodes exactly as Hugging Face {@code tokenizers} does for the
 * Qwen family: added tokens are matched first, the text between them is normalized (NFC), split into words by
 * the pre-tokenizer, and each word's UTF-8 bytes are merged by BPE rank. Thread-safe.
 *
 * <p>Java strings may hold lone surrogates, which no UTF-8 text can: each is encoded as U+FFFD, the replacement
 * character (what a lossy UTF-16 to UTF-8 conversion produces).
 */
public final class Tokenizer {
    private final String[] tokens;
    private final byte[][] tokenBytes;
    private final boolean[] special;
    private final Map<String, Integer> ids;
    private final AddedTokenMatcher matcher;
    private final Normalizer.Form normalization;
    private final PreTokenizer preTokenizer;
    private final Bpe bpe;

    private Tokenizer(String[] tokens, Map<String, Integer> ids, List<AddedToken> addedTokens,
                      Normalizer.Form normalization, PreTokenizer preTokenizer, Bpe bpe) {
        this.tokens = tokens;
        this.ids = ids;
        this.matcher = new AddedTokenMatcher(addedTokens);
        this.normalization = normalization;
        this.preTokenizer = preTokenizer;
        this.bpe = bpe;
        this.special = new boolean[tokens.length];
        for (AddedToken t : addedTokens) {
            special[t.id()] = t.special();
        }
        this.tokenBytes = new byte[tokens.length][];
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] != null) {
                tokenBytes[i] = ByteLevel.decode(tokens[i]);
            }
        }
    }

    /**
     * Builds a tokenizer from plain parts, wherever they were read from.
     *
     * @param tokensById    token strings (byte-level form, e.g. {@code Ġthe}) by id; null for unused ids. Added
     *                      tokens may be listed here too or only in {@code addedTokens}
     * @param merges        BPE merges as pairs {left, right}, in rank order
     * @param addedTokens   tokens matched in the text before BPE
     * @param normalization Unicode normalization of the text between added tokens, or null for none
     * @param preTokenizer  how text is split into words ({@link PreTokenizer#named}, {@link PreTokenizer#regex})
     * @param ignoreMerges  a word that is itself in the vocabulary becomes that token without merging (Llama 3 style)
     */
    public static Tokenizer create(List<String> tokensById, List<String[]> merges, List<AddedToken> addedTokens,
                                   Normalizer.Form normalization, PreTokenizer preTokenizer, boolean ignoreMerges) {
        int size = tokensById.size();
        for (AddedToken t : addedTokens) {
            if (t.id() < 0) {
                throw new EdgeLmException("added token '" + t.content() + "' has negative id " + t.id());
            }
            // ids may leave gaps, but not so many that the table sized by the largest id dwarfs the vocabulary
            if (t.id() >= 2L * (tokensById.size() + addedTokens.size()) + 65536) {
                throw new EdgeLmException("added token '" + t.content() + "' has id " + t.id() + ", far past the "
                        + tokensById.size() + " tokens of the vocabulary");
            }
            size = Math.max(size, t.id() + 1);
        }
        String[] tokens = new String[size];
        Map<String, Integer> ids = new HashMap<>(size * 2);
        for (int i = 0; i < tokensById.size(); i++) {
            String t = tokensById.get(i);
            if (t != null) {
                tokens[i] = t;
                ids.putIfAbsent(t, i);
            }
        }
        for (AddedToken t : addedTokens) {
            tokens[t.id()] = t.content();
            ids.put(t.content(), t.id());
        }
        int[] byteTokens = new int[256];
        for (int b = 0; b < 256; b++) {
            Integer id = ids.get(String.valueOf(ByteLevel.charOf(b)));
            if (id == null) {
                throw new EdgeLmException(String.format("vocabulary has no token for byte 0x%02X ('%s'): not a byte-level BPE vocabulary",
                        b, ByteLevel.charOf(b)));
            }
            byteTokens[b] = id;
        }
        MergeTable table = new MergeTable(merges.size());
        for (int r = 0; r < merges.size(); r++) {
            String[] m = merges.get(r);
            Integer left = ids.get(m[0]);
            Integer right = ids.get(m[1]);
            Integer merged = ids.get(m[0] + m[1]);
            if (left == null || right == null || merged == null) {
                String missing = left == null ? m[0] : right == null ? m[1] : m[0] + m[1];
                throw new EdgeLmException("merge " + r + " (" + m[0] + " " + m[1] + "): token '" + missing + "' is not in the vocabulary");
            }
            table.put(left, right, r, merged);
        }
        Bpe bpe = new Bpe(byteTokens, table, ignoreMerges ? ids : null);
        return new Tokenizer(tokens, ids, addedTokens, normalization, preTokenizer, bpe);
    }

    /** Encodes text; added tokens written in it (special or not) become their ids, as Hugging Face does by default. */
    public int[] encode(String text) {
        return encode(text, false);
    }

    /**
     * Encodes text without adding any token. With {@code splitSpecial}, special tokens written in the text are
     * encoded as plain text; non-special added tokens (such as {@code <think>}) are still matched.
     */
    public int[] encode(String text, boolean splitSpecial) {
        String clean = replaceLoneSurrogates(text);
        IntList out = new IntList(clean.length() / 3 + 4);
        if (matcher.isEmpty()) {
            encodePlain(clean, out);
        } else {
            for (AddedTokenMatcher.Piece p : matcher.split(clean, splitSpecial)) {
                if (p.token() != null) {
                    out.add(p.token().id());
                } else {
                    encodePlain(clean.substring(p.start(), p.end()), out);
                }
            }
        }
        return out.toArray();
    }

    /**
     * Encodes text in which {@code plainRanges} ({@code start, end} pairs of char offsets) hold untrusted content,
     * such as a user's message inside a rendered chat prompt: special tokens written there are encoded as plain text,
     * as with {@code splitSpecial}; elsewhere they become their ids. Without special-token text inside the ranges,
     * the ids are those of {@link #encode(String)}.
     */
    public int[] encode(String text, int[] plainRanges) {
        String clean = replaceLoneSurrogates(text);
        IntList out = new IntList(clean.length() / 3 + 4);
        if (matcher.isEmpty()) {
            encodePlain(clean, out);
            return out.toArray();
        }
        AddedTokenMatcher.PlainSpans plain = (start, end) -> {
            for (int i = 0; i + 1 < plainRanges.length; i += 2) {
                if (start < plainRanges[i + 1] && end > plainRanges[i]) {
                    return true;
                }
            }
            return false;
        };
        for (AddedTokenMatcher.Piece p : matcher.split(clean, plain)) {
            if (p.token() != null) {
                out.add(p.token().id());
            } else {
                encodePlain(clean.substring(p.start(), p.end()), out);
            }
        }
        return out.toArray();
    }

    /** The Unicode normalization applied before pre-tokenization, or null for none. */
    public Normalizer.Form normalization() {
        return normalization;
    }

    /** Whether {@code text} contains the text of a special token (which {@link #encode(String)} would turn into it). */
    public boolean containsSpecialText(String text) {
        if (matcher.isEmpty()) {
            return false;
        }
        for (AddedTokenMatcher.Piece p : matcher.split(text, false)) {
            if (p.token() != null && p.token().special()) {
                return true;
            }
        }
        return false;
    }

    private void encodePlain(String text, IntList out) {
        String normalized = normalization == null ? text : Normalizer.normalize(text, normalization);
        preTokenizer.split(normalized, (start, end) -> bpe.encode(normalized.substring(start, end), out));
    }

    static String replaceLoneSurrogates(String s) {
        int n = s.length();
        StringBuilder sb = null;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!Character.isSurrogate(c)) {
                continue;
            }
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder(s);
            }
            sb.setCharAt(i, '\uFFFD');
        }
        return sb == null ? s : sb.toString();
    }

    /** Decodes ids to text (invalid UTF-8 becomes U+FFFD); {@code skipSpecial} leaves special tokens out. */
    public String decode(int[] ids, boolean skipSpecial) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(ids.length * 4);
        for (int id : ids) {
            if (!skipSpecial || !isSpecial(id)) {
                bytes.writeBytes(rawBytes(id));
            }
        }
        byte[] all = bytes.toByteArray();
        return Utf8.decode(all, 0, all.length);
    }

    /** A decoder for streaming generation: text comes out as soon as its UTF-8 characters are complete. */
    public IncrementalDecoder newDecoder(boolean skipSpecial) {
        return new IncrementalDecoder(this, skipSpecial);
    }

    byte[] rawBytes(int id) {
        checkId(id);
        return tokenBytes[id];
    }

    /** The bytes a token decodes to (a copy; a byte-level token may hold part of a UTF-8 character). */
    public byte[] bytes(int id) {
        return rawBytes(id).clone();
    }

    /** The token's string as the vocabulary writes it (byte-level form; added tokens as their content). */
    public String token(int id) {
        checkId(id);
        return tokens[id];
    }

    /** The id of a token string (byte-level form, or an added token's content). */
    public OptionalInt id(String token) {
        Integer id = ids.get(token);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** Whether {@code id} is a token of this vocabulary (a model may have more embedding rows than tokens). */
    public boolean hasToken(int id) {
        return id >= 0 && id < tokens.length && tokens[id] != null;
    }

    public boolean isSpecial(int id) {
        checkId(id);
        return special[id];
    }

    /** One more than the highest token id. */
    public int vocabSize() {
        return tokens.length;
    }

    private void checkId(int id) {
        if (id < 0 || id >= tokens.length || tokens[id] == null) {
            throw new EdgeLmException("token id " + id + " is not in the vocabulary (ids 0.." + (tokens.length - 1) + ")");
        }
    }
}
