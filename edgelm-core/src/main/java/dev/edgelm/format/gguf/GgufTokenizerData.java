package dev.edgelm.format.gguf;

import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tokenizer section of a GGUF file ({@code tokenizer.ggml.*}, {@code tokenizer.chat_template}) as
 * plain data: what a tokenizer needs to be built, nothing interpreted. Ids are -1 when absent; the chat
 * template is null when absent.
 *
 * @param model      {@code tokenizer.ggml.model}: "gpt2" for byte-level BPE
 * @param pre        {@code tokenizer.ggml.pre}: the pre-tokenizer's name, "qwen35" or "qwen2" for Qwen
 * @param tokens     token text by id (byte-level BPE symbols)
 * @param tokenTypes one of the {@code TYPE_*} constants per token
 * @param merges     BPE merges in priority order, each "left right"
 */
public record GgufTokenizerData(
        String model,
        String pre,
        String[] tokens,
        int[] tokenTypes,
        String[] merges,
        int bosId,
        int eosId,
        int eotId,
        int padId,
        boolean addBos,
        String chatTemplate) {

    /** llama.cpp's token types. */
    public static final int TYPE_NORMAL = 1;
    public static final int TYPE_UNKNOWN = 2;
    public static final int TYPE_CONTROL = 3;
    public static final int TYPE_USER_DEFINED = 4;
    public static final int TYPE_UNUSED = 5;
    public static final int TYPE_BYTE = 6;

    public static final String MODEL = "tokenizer.ggml.model";
    public static final String PRE = "tokenizer.ggml.pre";
    public static final String TOKENS = "tokenizer.ggml.tokens";
    public static final String TOKEN_TYPE = "tokenizer.ggml.token_type";
    public static final String MERGES = "tokenizer.ggml.merges";
    public static final String BOS_ID = "tokenizer.ggml.bos_token_id";
    public static final String EOS_ID = "tokenizer.ggml.eos_token_id";
    public static final String EOT_ID = "tokenizer.ggml.eot_token_id";
    public static final String PAD_ID = "tokenizer.ggml.padding_token_id";
    public static final String ADD_BOS = "tokenizer.ggml.add_bos_token";
    public static final String CHAT_TEMPLATE = "tokenizer.chat_template";

    public GgufTokenizerData {
        if (tokens.length != tokenTypes.length) {
            throw new IllegalArgumentException(tokens.length + " tokens but " + tokenTypes.length + " token types");
        }
    }

    /** The text llama.cpp gives an id that has no token (type {@link #TYPE_UNUSED}). */
    public static String paddingToken(int id) {
        return "[PAD" + id + "]";
    }

    /** The type of an added token: control for special ones and {@code <|...|>} ones, else user-defined. */
    public static int addedTokenType(String content, boolean special) {
        boolean looksSpecial = content.startsWith("<|") && content.endsWith("|>");
        return special || looksSpecial ? TYPE_CONTROL : TYPE_USER_DEFINED;
    }

    /** The tokenizer section of a file, or empty when it has none ({@code tokenizer.ggml.model} absent or "none"). */
    public static Optional<GgufTokenizerData> read(GgufMetadata m) {
        Optional<String> model = m.optString(MODEL);
        if (model.isEmpty() || model.get().equals("none") || model.get().equals("no_vocab")) {
            return Optional.empty();
        }
        String[] tokens = m.optStringArray(TOKENS).orElse(new String[0]);
        int[] types = m.optIntArray(TOKEN_TYPE).orElseGet(() -> {
            int[] t = new int[tokens.length];
            Arrays.fill(t, TYPE_NORMAL);
            return t;
        });
        if (types.length != tokens.length) {
            throw new EdgeLmException(m.source() + ": " + TOKEN_TYPE + " has " + types.length
                    + " entries but " + TOKENS + " has " + tokens.length);
        }
        return Optional.of(new GgufTokenizerData(model.get(), m.optString(PRE).orElse("default"), tokens, types,
                m.optStringArray(MERGES).orElse(new String[0]), id(m, BOS_ID), id(m, EOS_ID), id(m, EOT_ID),
                id(m, PAD_ID), m.optBoolean(ADD_BOS).orElse(false), m.optString(CHAT_TEMPLATE).orElse(null)));
    }

    private static int id(GgufMetadata m, String key) {
        return m.optLong(key).map(Long::intValue).orElse(-1);
    }

    /** Adds this section's keys in llama.cpp's order; absent ids and template are left out. */
    public void writeTo(Map<String, GgufValue> meta) {
        meta.put(MODEL, GgufValue.string(model));
        meta.put(PRE, GgufValue.string(pre));
        meta.put(TOKENS, GgufValue.stringArray(tokens));
        meta.put(TOKEN_TYPE, GgufValue.i32Array(tokenTypes));
        meta.put(MERGES, GgufValue.stringArray(merges));
        putId(meta, BOS_ID, bosId);
        putId(meta, EOS_ID, eosId);
        putId(meta, EOT_ID, eotId);
        putId(meta, PAD_ID, padId);
        meta.put(ADD_BOS, GgufValue.bool(addBos));
        if (chatTemplate != null) {
            meta.put(CHAT_TEMPLATE, GgufValue.string(chatTemplate));
        }
    }

    private static void putId(Map<String, GgufValue> meta, String key, int id) {
        if (id >= 0) {
            meta.put(key, GgufValue.u32(id));
        }
    }

    /** Ids that end a reply: the generation defaults' eos ids if given, then eos and end-of-turn. */
    public int[] stopTokenIds(GenerationDefaults generation) {
        Set<Integer> ids = new LinkedHashSet<>();
        if (generation != null && generation.eosTokenIds() != null) {
            for (int id : generation.eosTokenIds()) {
                ids.add(id);
            }
        }
        if (eosId >= 0) {
            ids.add(eosId);
        }
        if (eotId >= 0) {
            ids.add(eotId);
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Number of tokens of a type. */
    public int count(int type) {
        int n = 0;
        for (int t : tokenTypes) {
            n += t == type ? 1 : 0;
        }
        return n;
    }
}
