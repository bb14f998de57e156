package dev.edgelm.tokenizer;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds a {@link Tokenizer} from the tokenizer section of a GGUF file (byte-level BPE, {@code tokenizer.ggml.model
 * = gpt2}). Token types map to added tokens as llama.cpp reads them: control tokens (type 3) are special added
 * tokens, user-defined tokens (type 4) are added tokens that are not special; both are matched in the text before
 * BPE. Unused ids (type 5, the {@code [PADn]} rows) get no token. The pre-tokenizer is chosen by
 * {@code tokenizer.ggml.pre}. GGUF records no normalizer: the Qwen tokenizers normalize to NFC, so the Qwen
 * pre-tokenizers get NFC, the others none.
 */
public final class TokenizerGguf {
    private TokenizerGguf() {}

    /** The tokenizer of a GGUF file; a file without one fails with a message saying so. */
    public static Tokenizer load(Path file) {
        try (GgufFile gguf = GgufFile.open(file)) {
            GgufTokenizerData data = GgufTokenizerData.read(gguf.metadata()).orElseThrow(() -> new EdgeLmException(
                    file + ": this GGUF file has no tokenizer (no " + GgufTokenizerData.MODEL + ")"));
            return create(data, file.toString());
        }
    }

    /** Builds the tokenizer; {@code where} names the file in error messages. */
    public static Tokenizer create(GgufTokenizerData data, String where) {
        if (!data.model().equals("gpt2")) {
            throw new EdgeLmException(where + ": tokenizer model '" + data.model() + "' is not supported (byte-level BPE, 'gpt2', only)");
        }
        String[] tokens = data.tokens();
        int[] types = data.tokenTypes();
        List<String> byId = new ArrayList<>(Arrays.asList(tokens));
        List<AddedToken> added = new ArrayList<>();
        for (int id = 0; id < tokens.length; id++) {
            switch (types[id]) {
                case GgufTokenizerData.TYPE_UNUSED -> byId.set(id, null);
                case GgufTokenizerData.TYPE_CONTROL -> added.add(added(id, tokens[id], true, where));
                case GgufTokenizerData.TYPE_USER_DEFINED -> added.add(added(id, tokens[id], false, where));
                default -> { }
            }
        }
        List<String[]> merges = new ArrayList<>(data.merges().length);
        for (int r = 0; r < data.merges().length; r++) {
            String[] pair = data.merges()[r].split(" ", -1);
            if (pair.length != 2) {
                throw new EdgeLmException(where + ": " + GgufTokenizerData.MERGES + "[" + r + "] '" + data.merges()[r]
                        + "' is not two tokens separated by a space");
            }
            merges.add(pair);
        }
        String pre = data.pre();
        Normalizer.Form form = pre.startsWith("qwen") ? Normalizer.Form.NFC : null;
        PreTokenizer preTokenizer;
        try {
            preTokenizer = PreTokenizer.named(pre);
        } catch (EdgeLmException e) {
            throw new EdgeLmException(where + ": " + GgufTokenizerData.PRE + ": " + e.getMessage());
        }
        try {
            return Tokenizer.create(byId, merges, added, form, preTokenizer, false);
        } catch (EdgeLmException e) {
            throw new EdgeLmException(where + ": " + e.getMessage());
        }
    }

    private static AddedToken added(int id, String content, boolean special, String where) {
        if (content.isEmpty()) {
            throw new EdgeLmException(where + ": " + GgufTokenizerData.TOKENS + "[" + id + "] is an empty added token");
        }
        return AddedToken.of(id, content, special);
    }
}
