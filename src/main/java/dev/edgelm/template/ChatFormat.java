package dev.edgelm.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.tokenizer.Tokenizer;
import dev.edgelm.tokenizer.TokenizerJson;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a runtime needs to chat with a checkpoint: its tokenizer, its chat template and the ids that end an
 * assistant turn. Read from a Hugging Face checkpoint folder ({@code tokenizer.json},
 * {@code tokenizer_config.json}, {@code chat_template.jinja}, {@code generation_config.json}).
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

    /** Loads tokenizer, template and stop tokens from a checkpoint folder. */
    public static ChatFormat load(Path folder) {
        if (!Files.isDirectory(folder)) {
            throw new EdgeLmException(folder + ": not a checkpoint folder");
        }
        Tokenizer tokenizer = TokenizerJson.loadFrom(folder);
        JsonNode config = readJson(folder.resolve("tokenizer_config.json"));
        return new ChatFormat(tokenizer, loadTemplate(folder, config), stopTokenIds(folder, tokenizer), folder.toString());
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    public boolean hasTemplate() {
        return template != null;
    }

    /** The chat template; a checkpoint without one (a base model) fails here with a clear message. */
    public ChatTemplate template() {
        if (template == null) {
            throw new EdgeLmException(where + ": no chat template (neither chat_template.jinja nor tokenizer_config.json chat_template)");
        }
        return template;
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
    public static int[] stopTokenIds(Path folder, Tokenizer tokenizer) {
        Set<Integer> ids = new LinkedHashSet<>();
        Path genPath = folder.resolve("generation_config.json");
        JsonNode gen = readJson(genPath);
        JsonNode eos = gen.path("eos_token_id");
        for (JsonNode id : eos.isArray() ? eos : List.of(eos)) {
            if (id.isMissingNode() || id.isNull()) {
                continue;
            }
            if (!id.canConvertToInt() || id.asInt() < 0 || id.asInt() >= tokenizer.vocabSize()) {
                throw new EdgeLmException(genPath + ": eos_token_id " + id + " is not a token id of this tokenizer");
            }
            ids.add(id.asInt());
        }
        JsonNode config = readJson(folder.resolve("tokenizer_config.json"));
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
            try {
                return ChatTemplate.parse(Files.readString(jinja), jinja.toString(), special);
            } catch (IOException e) {
                throw new EdgeLmException(jinja + ": cannot read: " + e.getMessage());
            }
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
