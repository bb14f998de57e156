package dev.edgelm.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the tokenizer of a Hugging Face checkpoint folder into GGUF's tokenizer data, the way llama.cpp's
 * converter does: {@code tokenizer.json} (byte-level BPE: vocab, merges, added tokens),
 * {@code tokenizer_config.json} (eos / pad / bos tokens, chat template), {@code chat_template.jinja}
 * (the template, preferred when present) and {@code generation_config.json} (sampling defaults).
 */
public final class HfTokenizerFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HfTokenizerFiles() {}

    /**
     * The tokenizer padded to {@code vocabSize} entries (ids without a token become {@code [PADn]},
     * type UNUSED, as llama.cpp writes them), or empty when the folder has no {@code tokenizer.json}.
     */
    public static Optional<GgufTokenizerData> read(Path folder, int vocabSize) {
        Path tokenizerJson = folder.resolve("tokenizer.json");
        if (!Files.isRegularFile(tokenizerJson)) {
            return Optional.empty();
        }
        JsonNode root = readJson(tokenizerJson);
        JsonNode model = root.path("model");
        String type = model.path("type").asText("");
        if (!type.equals("BPE")) {
            throw new EdgeLmException(tokenizerJson + ": tokenizer model '" + type + "' is not supported (byte-level BPE expected)");
        }
        String[] tokens = new String[vocabSize];
        int[] types = new int[vocabSize];
        Map<String, Integer> ids = new HashMap<>();
        JsonNode vocab = model.path("vocab");
        if (!vocab.isObject()) {
            throw new EdgeLmException(tokenizerJson + ": model.vocab is not an object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = vocab.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int id = tokenId(e.getValue(), e.getKey(), vocabSize, tokenizerJson);
            tokens[id] = e.getKey();
            types[id] = GgufTokenizerData.TYPE_NORMAL;
            ids.put(e.getKey(), id);
        }
        JsonNode addedTokens = root.path("added_tokens");
        if (!addedTokens.isMissingNode() && !addedTokens.isNull() && !addedTokens.isArray()) {
            throw new EdgeLmException(tokenizerJson + ": added_tokens is " + addedTokens.getNodeType().toString().toLowerCase()
                    + ", expected a list");
        }
        for (JsonNode added : addedTokens) {
            String content = added.path("content").asText();
            int id = tokenId(added.get("id"), content, vocabSize, tokenizerJson);
            tokens[id] = content;
            types[id] = GgufTokenizerData.addedTokenType(content, added.path("special").asBoolean(false));
            ids.put(content, id);
        }
        for (int i = 0; i < vocabSize; i++) {
            if (tokens[i] == null) {
                tokens[i] = GgufTokenizerData.paddingToken(i);
                types[i] = GgufTokenizerData.TYPE_UNUSED;
            }
        }
        if (!model.path("merges").isArray()) {
            throw new EdgeLmException(tokenizerJson + ": model.merges is missing or not a list (without merges the "
                    + "model's text would be encoded byte by byte)");
        }
        String[] merges = merges(model.path("merges"), tokenizerJson);
        if (merges.length == 0) {
            throw new EdgeLmException(tokenizerJson + ": model.merges is empty (the model's text would be encoded byte by byte)");
        }
        JsonNode config = optionalJson(folder.resolve("tokenizer_config.json"));
        int eos = specialId(config, "eos_token", ids);
        int eot = ids.getOrDefault("<|im_end|>", eos);
        return Optional.of(new GgufTokenizerData("gpt2", preTokenizerName(root.path("pre_tokenizer")), tokens, types, merges,
                specialId(config, "bos_token", ids), eos, eot, specialId(config, "pad_token", ids),
                config != null && config.path("add_bos_token").asBoolean(false), chatTemplate(folder, config)));
    }

    /** The generation defaults of {@code generation_config.json}, or {@link GenerationDefaults#NONE}. */
    public static GenerationDefaults generationDefaults(Path folder) {
        return GenerationDefaults.readFolder(folder);
    }

    /**
     * llama.cpp names the Qwen pre-tokenizers by their split regex: Qwen3.5's keeps combining marks with
     * letters ({@code \p{M}}), Qwen2/3's does not.
     */
    static String preTokenizerName(JsonNode preTokenizer) {
        List<String> texts = new ArrayList<>();
        collectText(preTokenizer, texts);
        return texts.stream().anyMatch(t -> t.contains("\\p{M}")) ? "qwen35" : "qwen2";
    }

    private static void collectText(JsonNode n, List<String> out) {
        if (n.isTextual()) {
            out.add(n.asText());
        }
        for (JsonNode child : n) {
            collectText(child, out);
        }
    }

    private static String[] merges(JsonNode merges, Path file) {
        String[] out = new String[merges.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode m = merges.get(i);
            if (m.isTextual()) {
                out[i] = m.asText();
            } else if (m.isArray() && m.size() == 2) {
                out[i] = m.get(0).asText() + " " + m.get(1).asText();
            } else {
                throw new EdgeLmException(file + ": merge #" + i + " is neither \"a b\" nor [\"a\", \"b\"]");
            }
        }
        return out;
    }

    private static int tokenId(JsonNode idNode, String token, int vocabSize, Path file) {
        if (idNode == null || !idNode.canConvertToInt()) {
            throw new EdgeLmException(file + ": token '" + token + "' has no integer id");
        }
        int id = idNode.asInt();
        if (id < 0 || id >= vocabSize) {
            throw new EdgeLmException(file + ": token '" + token + "' has id " + id
                    + ", outside the model's vocabulary of " + vocabSize + " (config.json vocab_size)");
        }
        return id;
    }

    /** The id of a special token named in tokenizer_config.json (a string or {content: ...}), or -1. */
    private static int specialId(JsonNode config, String field, Map<String, Integer> ids) {
        if (config == null) {
            return -1;
        }
        JsonNode v = config.get(field);
        String text = v == null || v.isNull() ? null : v.isTextual() ? v.asText() : v.path("content").asText(null);
        return text == null ? -1 : ids.getOrDefault(text, -1);
    }

    private static String chatTemplate(Path folder, JsonNode config) {
        Path jinja = folder.resolve("chat_template.jinja");
        if (Files.isRegularFile(jinja)) {
            return dev.edgelm.util.TextFiles.readUtf8(jinja);
        }
        JsonNode t = config == null ? null : config.get("chat_template");
        if (t == null || t.isNull()) {
            return null;
        }
        if (t.isTextual()) {
            return t.asText();
        }
        for (JsonNode named : t) { // a list of {name, template}: llama.cpp keeps the default one
            if (named.path("name").asText().equals("default")) {
                return named.path("template").asText();
            }
        }
        return null;
    }

    private static JsonNode optionalJson(Path p) {
        return Files.isRegularFile(p) ? readJson(p) : null;
    }

    /** A JSON file that must hold an object; errors name the file. */
    static JsonNode readJson(Path p) {
        try {
            JsonNode n = JSON.readTree(Files.readString(p));
            if (n == null || !n.isObject()) {
                throw new EdgeLmException(p + ": not a JSON object");
            }
            return n;
        } catch (IOException e) {
            throw new EdgeLmException(p + ": cannot read or parse: " + e.getMessage());
        }
    }
}
