package dev.edgelm.tokenizer;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a Hugging Face {@code tokenizer.json} of the byte-level BPE kind (GPT-2, Qwen, Llama 3): model
 * {@code BPE} with {@code vocab} and {@code merges} (as "a b" strings or ["a", "b"] pairs), {@code added_tokens},
 * a Unicode normalizer, {@code Split} / {@code ByteLevel} pre-tokenizers and the {@code ByteLevel} decoder.
 * Anything else is refused with a message naming the field rather than encoded differently.
 */
public final class TokenizerJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TokenizerJson() {}

    /**
     * Loads what a user names: a {@code tokenizer.json} file, a checkpoint folder holding one, or a GGUF file (its
     * tokenizer metadata, through {@link TokenizerGguf}).
     */
    public static Tokenizer loadFrom(Path fileOrFolder) {
        if (java.nio.file.Files.isDirectory(fileOrFolder)) {
            Path file = fileOrFolder.resolve("tokenizer.json");
            if (!java.nio.file.Files.isRegularFile(file)) {
                throw new EdgeLmException(fileOrFolder + ": no tokenizer.json in this folder");
            }
            return load(file);
        }
        if (!java.nio.file.Files.exists(fileOrFolder)) {
            throw new EdgeLmException(fileOrFolder + ": no such file or folder");
        }
        if (GgufFile.isGgufName(fileOrFolder)) {
            return TokenizerGguf.load(fileOrFolder);
        }
        return load(fileOrFolder);
    }

    /** Loads a {@code tokenizer.json} file. */
    public static Tokenizer load(Path file) {
        try (java.io.InputStream in = new java.io.BufferedInputStream(java.nio.file.Files.newInputStream(file), 1 << 16)) {
            return read(in, file.toString());
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read tokenizer: " + e.getMessage());
        }
    }

    /**
     * Reads a tokenizer.json from a stream; {@code where} names it in error messages. The vocabulary and merges
     * (hundreds of thousands of entries) are streamed rather than built as a JSON tree.
     */
    public static Tokenizer read(java.io.InputStream in, String where) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode model = JSON.createObjectNode();
        List<String> tokens = null;
        List<String[]> merges = null;
        try (JsonParser p = JSON.createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new EdgeLmException(where + ": not a tokenizer.json (no JSON object)");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (!name.equals("model") || value != JsonToken.START_OBJECT) {
                    root.set(name, p.readValueAsTree());
                    continue;
                }
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken v = p.nextToken();
                    if (field.equals("vocab") && v == JsonToken.START_OBJECT) {
                        tokens = readVocab(p, where);
                    } else if (field.equals("merges") && v == JsonToken.START_ARRAY) {
                        merges = readMerges(p, where);
                    } else {
                        model.set(field, p.readValueAsTree());
                    }
                }
                root.set("model", model);
            }
        } catch (IOException e) {
            throw new EdgeLmException(where + ": cannot read tokenizer: " + e.getMessage());
        }
        return build(root, tokens, merges, where);
    }

    private static List<String> readVocab(JsonParser p, String where) throws IOException {
        List<String> tokens = new ArrayList<>(1 << 16);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String token = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_NUMBER_INT || p.getLongValue() < 0 || p.getLongValue() > Integer.MAX_VALUE) {
                throw new EdgeLmException(where + ": model.vocab['" + token + "'] is not a token id");
            }
            int id = p.getIntValue();
            if (id >= Limits.vocabulary()) {
                throw new EdgeLmException(where + ": model.vocab['" + token + "'] = " + id + " is not below "
                        + Limits.vocabulary() + " (the limit edgelm.limit.vocab)");
            }
            while (tokens.size() <= id) {
                tokens.add(null);
            }
            tokens.set(id, token);
        }
        return tokens;
    }

    private static List<String[]> readMerges(JsonParser p, String where) throws IOException {
        List<String[]> merges = new ArrayList<>(1 << 16);
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            String[] pair = null;
            if (t == JsonToken.VALUE_STRING) {
                pair = p.getText().split(" ", -1);
            } else if (t == JsonToken.START_ARRAY && p.nextToken() == JsonToken.VALUE_STRING) {
                String a = p.getText();
                if (p.nextToken() == JsonToken.VALUE_STRING) {
                    String b = p.getText();
                    if (p.nextToken() == JsonToken.END_ARRAY) {
                        pair = new String[] {a, b};
                    }
                }
            }
            if (pair == null || pair.length != 2) {
                throw new EdgeLmException(where + ": model.merges[" + merges.size() + "] is not a pair of tokens");
            }
            merges.add(pair);
        }
        return merges;
    }

    private static Tokenizer build(JsonNode root, List<String> tokens, List<String[]> merges, String where) {
        JsonNode model = root.path("model");
        if (!"BPE".equals(model.path("type").asText())) {
            throw new EdgeLmException(where + ": model.type '" + model.path("type").asText() + "' is not supported (BPE only)");
        }
        if (model.path("byte_fallback").asBoolean(false)) {
            throw new EdgeLmException(where + ": model.byte_fallback is not supported (a SentencePiece-style BPE)");
        }
        if (!model.path("continuing_subword_prefix").asText("").isEmpty() || !model.path("end_of_word_suffix").asText("").isEmpty()) {
            throw new EdgeLmException(where + ": model.continuing_subword_prefix / end_of_word_suffix are not supported");
        }
        if (tokens == null) {
            throw new EdgeLmException(where + ": model.vocab is missing");
        }
        if (merges == null) {
            throw new EdgeLmException(where + ": model.merges is missing");
        }
        List<AddedToken> added = new ArrayList<>();
        JsonNode addedTokens = root.path("added_tokens");
        if (!addedTokens.isMissingNode() && !addedTokens.isNull() && !addedTokens.isArray()) {
            throw new EdgeLmException(where + ": added_tokens is " + addedTokens.getNodeType().toString().toLowerCase()
                    + ", expected a list");
        }
        for (JsonNode t : addedTokens) {
            if (!t.path("id").isIntegralNumber() || !t.path("id").canConvertToInt() || !t.path("content").isTextual()
                    || t.path("content").asText().isEmpty()) {
                throw new EdgeLmException(where + ": added_tokens entry " + t + " needs an id and a non-empty content");
            }
            if (t.path("id").asInt() < 0 || t.path("id").asInt() >= Limits.vocabulary()) {
                throw new EdgeLmException(where + ": added_tokens entry " + t + " has an id outside [0, " + Limits.vocabulary()
                        + ") (the limit edgelm.limit.vocab)");
            }
            added.add(new AddedToken(t.path("id").asInt(), t.path("content").asText(), t.path("special").asBoolean(false),
                    t.path("lstrip").asBoolean(false), t.path("rstrip").asBoolean(false), t.path("single_word").asBoolean(false)));
        }
        Normalizer.Form form = parseNormalizer(root.path("normalizer"), where);
        PreTokenizer pre = parsePreTokenizer(root.path("pre_tokenizer"), where);
        JsonNode decoder = root.path("decoder");
        if (!decoder.isMissingNode() && !decoder.isNull() && !"ByteLevel".equals(decoder.path("type").asText())) {
            throw new EdgeLmException(where + ": decoder.type '" + decoder.path("type").asText() + "' is not supported (ByteLevel only)");
        }
        try {
            return Tokenizer.create(tokens, merges, added, form, pre, model.path("ignore_merges").asBoolean(false));
        } catch (EdgeLmException e) {
            throw new EdgeLmException(where + ": " + e.getMessage());
        }
    }

    private static Normalizer.Form parseNormalizer(JsonNode node, String where) {
        if (node.isMissingNode() || node.isNull()) {
            return null;
        }
        String type = node.path("type").asText();
        if (type.equals("Sequence")) {
            Normalizer.Form form = null;
            for (JsonNode n : node.path("normalizers")) {
                Normalizer.Form f = parseNormalizer(n, where);
                if (f != null && form != null && f != form) {
                    throw new EdgeLmException(where + ": normalizer sequence of " + form + " and " + f + " is not supported");
                }
                form = f != null ? f : form;
            }
            return form;
        }
        return switch (type) {
            case "NFC" -> Normalizer.Form.NFC;
            case "NFD" -> Normalizer.Form.NFD;
            case "NFKC" -> Normalizer.Form.NFKC;
            case "NFKD" -> Normalizer.Form.NFKD;
            default -> throw new EdgeLmException(where + ": normalizer.type '" + type + "' is not supported (NFC, NFD, NFKC, NFKD)");
        };
    }

    private static PreTokenizer parsePreTokenizer(JsonNode node, String where) {
        List<PreTokenizer> steps = new ArrayList<>();
        collectPreTokenizers(node, where, steps);
        if (steps.isEmpty()) {
            return (text, sink) -> sink.word(0, text.length());
        }
        return PreTokenizer.sequence(steps);
    }

    private static void collectPreTokenizers(JsonNode node, String where, List<PreTokenizer> steps) {
        if (node.isMissingNode() || node.isNull()) {
            return;
        }
        String type = node.path("type").asText();
        switch (type) {
            case "Sequence" -> {
                for (JsonNode n : node.path("pretokenizers")) {
                    collectPreTokenizers(n, where, steps);
                }
            }
            case "Split" -> {
                if (!"Isolated".equals(node.path("behavior").asText()) || node.path("invert").asBoolean(false)) {
                    throw new EdgeLmException(where + ": pre_tokenizer Split with behavior '" + node.path("behavior").asText()
                            + "'" + (node.path("invert").asBoolean(false) ? " and invert" : "") + " is not supported (Isolated only)");
                }
                JsonNode pattern = node.path("pattern");
                String regex;
                if (pattern.has("Regex")) {
                    regex = pattern.path("Regex").asText();
                } else if (pattern.has("String")) {
                    regex = java.util.regex.Pattern.quote(pattern.path("String").asText());
                } else {
                    throw new EdgeLmException(where + ": pre_tokenizer Split has no pattern");
                }
                try {
                    steps.add(PreTokenizer.regex(regex));
                } catch (EdgeLmException e) {
                    throw new EdgeLmException(where + ": " + e.getMessage());
                }
            }
            case "ByteLevel" -> {
                if (node.path("add_prefix_space").asBoolean(false)) {
                    throw new EdgeLmException(where + ": pre_tokenizer ByteLevel add_prefix_space is not supported");
                }
                if (node.path("use_regex").asBoolean(true)) {
                    steps.add(PreTokenizer.regex(PreTokenizer.GPT2_PATTERN));
                }
            }
            default -> throw new EdgeLmException(where + ": pre_tokenizer type '" + type + "' is not supported (Split, ByteLevel, Sequence)");
        }
    }
}
