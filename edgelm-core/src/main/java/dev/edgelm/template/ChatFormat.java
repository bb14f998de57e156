package dev.edgelm.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufMetadata;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerGguf;
import dev.edgelm.tokenizer.TokenizerJson;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a runtime needs to chat with a model: its tokenizer, its chat template and the ids that end an
 * assistant turn. Read from a Hugging Face checkpoint folder ({@code tokenizer.json},
 * {@code tokenizer_config.json}, {@code chat_template.jinja}, {@code generation_config.json}) or from a GGUF
 * file ({@code tokenizer.ggml.*}, {@code tokenizer.chat_template}, {@code edgelm.generation.eos_token_id}).
 */
public final class ChatFormat {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Tokenizer tokenizer;
    private final ChatTemplate template;
    private final int[] stopTokenIds;
    private final String where;

    public ChatFormat(Tokenizer tokenizer, ChatTemplate template, int[] stopTokenIds, String where) {
        this.tokenizer = tokenizer;
        this.template = template;
        this.stopTokenIds = stopTokenIds.clone();
        this.where = where;
    }

    /** Loads tokenizer, template and stop tokens from a checkpoint folder or a GGUF file. */
    public static ChatFormat load(Path model) {
        if (Files.isDirectory(model)) {
            Tokenizer tokenizer = TokenizerJson.loadFrom(model);
            JsonNode config = readJson(model.resolve("tokenizer_config.json"));
            return new ChatFormat(tokenizer, loadTemplate(model, config), stopTokenIds(model, config, tokenizer), model.toString());
        }
        if (!isGguf(model)) {
            throw new EdgeLmException(model + ": not a checkpoint folder or a .gguf file");
        }
        try (GgufFile file = GgufFile.open(model)) {
            return read(file).orElseThrow(() -> new EdgeLmException(model + ": this GGUF file has no tokenizer"));
        }
    }

    /**
     * Tokenizer, template and stop tokens of a model that carries a tokenizer: a checkpoint folder with
     * {@code tokenizer.json}, a GGUF file with a {@code tokenizer.ggml.model}. Empty for a model without one,
     * which runs on token ids only. A GGUF header is read once.
     */
    public static Optional<ChatFormat> loadIfPresent(Path model) {
        if (Files.isDirectory(model)) {
            return Files.isRegularFile(model.resolve("tokenizer.json")) ? Optional.of(load(model)) : Optional.empty();
        }
        if (!isGguf(model)) {
            return Optional.empty();
        }
        try (GgufFile file = GgufFile.open(model)) {
            return read(file);
        }
    }

    /**
     * Tokenizer, template and stop tokens of a GGUF file, or empty when it has no tokenizer. The template sees
     * {@code eos_token}, {@code bos_token}, {@code pad_token} as the texts of the ids the file names; the stop
     * tokens are the generation defaults' eos ids, then the eos and end-of-turn ids.
     */
    public static Optional<ChatFormat> read(GgufFile file) {
        return read(file.metadata());
    }

    /** As {@link #read(GgufFile)}, from a GGUF file's metadata (also metadata about to be written, to check it). */
    public static Optional<ChatFormat> read(GgufMetadata metadata) {
        Optional<GgufTokenizerData> section = GgufTokenizerData.read(metadata);
        if (section.isEmpty()) {
            return Optional.empty();
        }
        GgufTokenizerData data = section.get();
        String where = metadata.source();
        Tokenizer tokenizer = TokenizerGguf.create(data, where);
        int[] stops = data.stopTokenIds(GenerationDefaults.read(metadata));
        for (int id : stops) {
            if (id < 0 || id >= tokenizer.vocabSize() || data.tokenTypes()[id] == GgufTokenizerData.TYPE_UNUSED) {
                throw new EdgeLmException(where + ": stop token id " + id + " is not a token of this tokenizer");
            }
        }
        if (stops.length == 0) {
            throw new EdgeLmException(where + ": no stop token (" + GgufTokenizerData.EOS_ID + ", " + GgufTokenizerData.EOT_ID
                    + " or " + GenerationDefaults.PREFIX + "eos_token_id)");
        }
        ChatTemplate template = null;
        if (data.chatTemplate() != null) {
            Map<String, Object> special = new LinkedHashMap<>();
            putToken(special, "bos_token", data.bosId(), data);
            putToken(special, "eos_token", data.eosId(), data);
            putToken(special, "pad_token", data.padId(), data);
            template = ChatTemplate.parse(data.chatTemplate(), where + " " + GgufTokenizerData.CHAT_TEMPLATE, special);
        }
        return Optional.of(new ChatFormat(tokenizer, template, stops, where));
    }

    private static void putToken(Map<String, Object> special, String name, int id, GgufTokenizerData data) {
        if (id >= 0 && id < data.tokens().length) {
            special.put(name, data.tokens()[id]);
        }
    }

    private static boolean isGguf(Path file) {
        return Files.isRegularFile(file) && GgufFile.isGgufName(file);
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    /** The chat template; a checkpoint without one (a base model) fails here with a clear message. */
    public ChatTemplate template() {
        if (template == null) {
            throw new EdgeLmException(where + ": no chat template (neither chat_template.jinja nor tokenizer_config.json "
                    + "chat_template, nor " + GgufTokenizerData.CHAT_TEMPLATE + " in a GGUF file)");
        }
        return template;
    }

    /** The same tokenizer and stop tokens with another chat template ({@code where} names it in errors). */
    public ChatFormat withTemplate(String source, String templateWhere) {
        ChatTemplate t = template != null ? template.withSource(source, templateWhere)
                : ChatTemplate.parse(source, templateWhere, Map.of());
        return new ChatFormat(tokenizer, t, stopTokenIds, where);
    }

    /** The ids that end an assistant turn, in the order found (generation config first). */
    public int[] stopTokenIds() {
        return stopTokenIds.clone();
    }

    public boolean isStopToken(int id) {
        for (int s : stopTokenIds) {
            if (s == id) {
                return true;
            }
        }
        return false;
    }

    /** Renders a conversation and encodes the prompt as {@code apply_chat_template(tokenize=True)} does. */
    public int[] encodePrompt(List<?> messages, List<?> tools, boolean addGenerationPrompt, Map<String, ?> extraKwargs) {
        return tokenizer.encode(template().render(messages, tools, addGenerationPrompt, extraKwargs));
    }

    /**
     * The stop tokens of a checkpoint: {@code generation_config.json}'s {@code eos_token_id} (a number or a list),
     * then {@code tokenizer_config.json}'s {@code eos_token}. Not the model config's {@code eos_token_id} alone:
     * for Qwen3.5 that is {@code <|endoftext|>}, while chat turns end with {@code <|im_end|>}.
     */
    private static int[] stopTokenIds(Path folder, JsonNode config, Tokenizer tokenizer) {
        Set<Integer> ids = new LinkedHashSet<>();
        int[] eos = GenerationDefaults.readFolder(folder).eosTokenIds();
        for (int id : eos == null ? new int[0] : eos) {
            if (id < 0 || id >= tokenizer.vocabSize()) {
                throw new EdgeLmException(folder.resolve(GenerationDefaults.FILE_NAME) + ": eos_token_id " + id
                        + " is not a token id of this tokenizer");
            }
            ids.add(id);
        }
        JsonNode eosToken = config.path("eos_token");
        if (eosToken.isObject()) {
            eosToken = eosToken.path("content");
        }
        if (eosToken.isTextual()) {
            int id = tokenizer.id(eosToken.asText()).orElseThrow(() -> new EdgeLmException(
                    folder.resolve("tokenizer_config.json") + ": eos_token '" + config.path("eos_token").asText() + "' is not in the vocabulary"));
            ids.add(id);
        }
        if (ids.isEmpty()) {
            throw new EdgeLmException(folder + ": no stop token (generation_config.json eos_token_id or tokenizer_config.json eos_token)");
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static ChatTemplate loadTemplate(Path folder, JsonNode config) {
        Map<String, Object> special = ChatTemplate.specialTokensOf(config);
        Path jinja = folder.resolve("chat_template.jinja");
        if (Files.isRegularFile(jinja)) {
            return ChatTemplate.parse(dev.edgelm.util.TextFiles.readUtf8(jinja), jinja.toString(), special);
        }
        JsonNode t = config.path("chat_template");
        if (t.isTextual()) {
            return ChatTemplate.parse(t.asText(), folder.resolve("tokenizer_config.json") + " chat_template", special);
        }
        if (t.isArray()) { // named templates: [{"name": "default", "template": "..."}, ...]
            for (JsonNode named : t) {
                if ("default".equals(named.path("name").asText())) {
                    return ChatTemplate.parse(named.path("template").asText(),
                            folder.resolve("tokenizer_config.json") + " chat_template 'default'", special);
                }
            }
            throw new EdgeLmException(folder.resolve("tokenizer_config.json") + ": chat_template list has no 'default' entry");
        }
        return null;
    }

    private static JsonNode readJson(Path file) {
        if (!Files.isRegularFile(file)) {
            return JSON.missingNode();
        }
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new EdgeLmException(file + ": not valid JSON: " + e.getMessage());
        }
    }
}
