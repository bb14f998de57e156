package dev.edgelm.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.jinja.Template;
import dev.edgelm.jinja.TemplateException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A model's chat template, rendered as Hugging Face's {@code apply_chat_template(..., tokenize=False)} renders it:
 * variables {@code messages}, {@code tools}, {@code documents} (none), {@code add_generation_prompt}, the
 * tokenizer's special tokens ({@code eos_token}, ...) and any extra keyword arguments such as
 * {@code enable_thinking}.
 *
 * <p>Messages follow the OpenAI / Hugging Face shape: {@code role}, {@code content} (a string or a list of
 * {@code {"type": "text"|"image"|"video", ...}} items), optional {@code reasoning_content}, {@code tool_calls}
 * ({@code {"function": {"name": ..., "arguments": {...}}}}), and {@code tool} role messages. They may be given as
 * Jackson trees or as plain maps and lists.
 */
public final class ChatTemplate {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Template template;
    private final String source;
    private final String where;
    private final Map<String, Object> specialTokens;

    private ChatTemplate(Template template, String source, String where, Map<String, Object> specialTokens) {
        this.template = template;
        this.source = source;
        this.where = where;
        this.specialTokens = specialTokens;
    }

    /**
     * Parses a template.
     *
     * @param source        the Jinja text
     * @param where         names the template in error messages (e.g. the file it came from)
     * @param specialTokens variables such as {@code eos_token} ({@link #specialTokensOf} reads them from a
     *                      tokenizer_config.json)
     */
    public static ChatTemplate parse(String source, String where, Map<String, Object> specialTokens) {
        try {
            return new ChatTemplate(Template.parse(source), source, where, Map.copyOf(specialTokens));
        } catch (TemplateException e) {
            throw new ChatTemplateException(where, e.getMessage(), e.line());
        }
    }

    /** Another template text with the same special-token variables ({@code --chat-template-file}). */
    public ChatTemplate withSource(String newSource, String newWhere) {
        return parse(newSource, newWhere, specialTokens);
    }

    /** The template text. */
    public String source() {
        return source;
    }

    /**
     * Renders a conversation.
     *
     * @param messages            the conversation (maps or Jackson nodes)
     * @param tools               tool definitions (JSON-schema style function specs), or null for none
     * @param addGenerationPrompt end with the opening of an assistant turn
     * @param extraKwargs         further template variables, e.g. {@code enable_thinking=false}
     */
    public String render(List<?> messages, List<?> tools, boolean addGenerationPrompt, Map<String, ?> extraKwargs) {
        Map<String, Object> vars = new LinkedHashMap<>();
        vars.put("messages", plain(messages));
        vars.put("tools", tools == null ? null : plain(tools));
        vars.put("documents", null);
        vars.put("add_generation_prompt", addGenerationPrompt);
        vars.putAll(specialTokens);
        for (Map.Entry<String, ?> e : extraKwargs.entrySet()) {
            vars.put(e.getKey(), plain(e.getValue()));
        }
        try {
            return template.render(vars);
        } catch (TemplateException e) {
            throw new ChatTemplateException(where, e.getMessage(), e.line());
        }
    }

    /** Jackson trees become plain maps, lists and scalars, in their order. */
    private static Object plain(Object v) {
        if (v instanceof JsonNode node) {
            return JSON.convertValue(node, Object.class);
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object x : list) {
                out.add(plain(x));
            }
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((k, x) -> out.put(k, plain(x)));
            return out;
        }
        return v;
    }

    /**
     * The special-token variables transformers passes to a template: {@code bos_token}, {@code eos_token},
     * {@code unk_token}, {@code sep_token}, {@code pad_token}, {@code cls_token}, {@code mask_token} where set (as
     * strings), and {@code additional_special_tokens}.
     */
    public static Map<String, Object> specialTokensOf(JsonNode tokenizerConfig) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : List.of("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")) {
            JsonNode v = tokenizerConfig.path(key);
            if (v.isObject()) {
                v = v.path("content");
            }
            if (v.isTextual()) {
                out.put(key, v.asText());
            }
        }
        JsonNode extra = tokenizerConfig.path("additional_special_tokens");
        if (extra.isArray() && !extra.isEmpty()) {
            List<Object> list = new ArrayList<>();
            for (JsonNode t : extra) {
                list.add(t.isObject() ? t.path("content").asText() : t.asText());
            }
            out.put("additional_special_tokens", list);
        }
        return out;
    }
}
