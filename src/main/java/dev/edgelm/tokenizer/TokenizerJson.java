package dev.edgelm.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Reads a Hugging Face {@code tokenizer.json} of the byte-level BPE kind (GPT-2, Qwen, Llama 3): model
 * {@code BPE} with {@code vocab} and {@code merges} (as "a b" strings or ["a", "b"] pairs), {@code added_tokens},
 * a Unicode normalizer, {@code Split} / {@code ByteLevel} pre-tokenizers and the {@code ByteLevel} decoder.
 * Anything else is refused with a message naming the field rather than encoded differently.
 */
public final class TokenizerJson {
    private TokenizerJson() {}

    /**
     * Loads what a user names: a {@code tokenizer.json} file or a checkpoint folder holding one. (GGUF files carry
     * their tokenizer as metadata and are read elsewhere.)
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
        if (fileOrFolder.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf")) {
            throw new EdgeLmException(fileOrFolder + ": GGUF files are not supported yet (give a tokenizer.json or a checkpoint folder)");
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

    /** Reads a tokenizer.json from a stream; {@code where} names it in error messages. */
    public static Tokenizer read(java.io.InputStream in, String where) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new EdgeLmException(where + ": cannot read tokenizer: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new EdgeLmException(where + ": not a tokenizer.json (no JSON object)");
        }
        return parse(root, where);
    }

    private static Tokenizer parse(JsonNode root, String where) {
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
        JsonNode vocab = model.path("vocab");
        if (!vocab.isObject()) {
            throw new EdgeLmException(where + ": model.vocab is missing");
        }
        List<String> tokens = new ArrayList<>(vocab.size());
        for (Iterator<Map.Entry<String, JsonNode>> it = vocab.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int id = e.getValue().asInt(-1);
            if (id < 0 || !e.getValue().canConvertToInt()) {
                throw new EdgeLmException(where + ": model.vocab['" + e.getKey() + "'] is not a token id");
            }
            while (tokens.size() <= id) {
                tokens.add(null);
            }
            tokens.set(id, e.getKey());
        }
        List<String[]> merges = parseMerges(model.path("merges"), where);
        List<AddedToken> added = new ArrayList<>();
        for (JsonNode t : root.path("added_tokens")) {
            if (!t.path("id").canConvertToInt() || !t.path("content").isTextual() || t.path("content").asText().isEmpty()) {
                throw new EdgeLmException(where + ": added_tokens entry " + t + " needs an id and a non-empty content");
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
        return Tokenizer.create(tokens, merges, added, form, pre, model.path("ignore_merges").asBoolean(false));
    }

    private static List<String[]> parseMerges(JsonNode node, String where) {
        if (!node.isArray()) {
            throw new EdgeLmException(where + ": model.merges is missing");
        }
        List<String[]> merges = new ArrayList<>(node.size());
        for (JsonNode m : node) {
            String[] pair;
            if (m.isTextual()) {
                pair = m.asText().split(" ", -1);
            } else if (m.isArray() && m.size() == 2 && m.get(0).isTextual() && m.get(1).isTextual()) {
                pair = new String[] {m.get(0).asText(), m.get(1).asText()};
            } else {
                pair = null;
            }
            if (pair == null || pair.length != 2) {
                throw new EdgeLmException(where + ": model.merges[" + merges.size() + "] = " + m + " is not a pair of tokens");
            }
            merges.add(pair);
        }
        return merges;
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
                if (pattern.has("Regex")) {
                    steps.add(PreTokenizer.regex(pattern.path("Regex").asText()));
                } else if (pattern.has("String")) {
                    steps.add(PreTokenizer.regex(java.util.regex.Pattern.quote(pattern.path("String").asText())));
                } else {
                    throw new EdgeLmException(where + ": pre_tokenizer Split has no pattern");
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
