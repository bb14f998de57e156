package dev.edgelm.synth;

import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.tokenizer.ByteLevel;
import java.util.Arrays;
import java.util.List;

/**
 * A stand-in for the Qwen3.5 tokenizer: the 256 byte tokens of byte-level BPE (GPT-2's byte-to-character
 * mapping, in its order, as ids 0..255 of every Qwen vocabulary), no merges, padding up to the vocabulary
 * size, and the special tokens at their released ids. Text therefore encodes one token per UTF-8 byte;
 * stop tokens, the chat format and the vocabulary size are those of the real models.
 */
final class StandInTokenizer {
    private StandInTokenizer() {}

    /**
     * The added tokens from {@code <|endoftext|>} on, in the released order (the Qwen3 family's list, which
     * puts {@code <|vision_start|>} at +9 and {@code <|video_pad|>} at +13, as in Qwen3.5). The seven further
     * ids Qwen3.5 reserves after {@code </think>} are left as padding.
     */
    static final List<String> SPECIAL_TOKENS = List.of(
            "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
            "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
            "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>",
            "</tool_response>", "<think>", "</think>");

    static final int END_OF_TEXT = 0;
    static final int IM_END = 2;

    /** ChatML, the turn format of Qwen3.5, without thinking or tools. */
    static final String CHAT_TEMPLATE = """
            {%- for message in messages -%}
            {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}
            {{- '<|im_start|>assistant\\n' -}}
            {%- endif -%}
            """;

    static GgufTokenizerData build(SynthShape shape) {
        int vocab = shape.vocabSize();
        int first = shape.firstSpecialId();
        if (first < 256 || first + SPECIAL_TOKENS.size() > vocab) {
            throw new IllegalArgumentException("special tokens at " + first + ".." + (first + SPECIAL_TOKENS.size() - 1)
                    + " do not fit between the 256 byte tokens and the vocabulary size " + vocab);
        }
        String[] tokens = new String[vocab];
        int[] types = new int[vocab];
        String[] bytes = byteTokens();
        for (int i = 0; i < vocab; i++) {
            tokens[i] = i < 256 ? bytes[i] : GgufTokenizerData.paddingToken(i);
            types[i] = i < 256 ? GgufTokenizerData.TYPE_NORMAL : GgufTokenizerData.TYPE_UNUSED;
        }
        for (int k = 0; k < SPECIAL_TOKENS.size(); k++) {
            String s = SPECIAL_TOKENS.get(k);
            tokens[first + k] = s;
            // as in the released tokenizer: the <|...|> tokens are special, the tag-like ones are not
            types[first + k] = GgufTokenizerData.addedTokenType(s, false);
        }
        int endOfText = first + END_OF_TEXT;
        int imEnd = first + IM_END;
        return new GgufTokenizerData("gpt2", "qwen35", tokens, types, new String[0], -1, imEnd, imEnd, endOfText,
                false, CHAT_TEMPLATE);
    }

    /** The released sampling defaults (thinking mode); replies end at {@code <|im_end|>} or {@code <|endoftext|>}. */
    static GenerationDefaults generationDefaults(SynthShape shape) {
        int first = shape.firstSpecialId();
        return new GenerationDefaults(true, 1.0, 0.95, 20, null, null, null, new int[] {first + IM_END, first + END_OF_TEXT});
    }

    /**
     * GPT-2's bytes_to_unicode, in its order: the printable bytes map to themselves (below U+0100), the others
     * to U+0100 onwards in byte order, and token i is the i-th of that list, so sorting the 256 characters
     * gives the token order.
     */
    static String[] byteTokens() {
        char[] chars = new char[256];
        for (int b = 0; b < 256; b++) {
            chars[b] = ByteLevel.charOf(b);
        }
        Arrays.sort(chars);
        String[] out = new String[256];
        for (int i = 0; i < 256; i++) {
            out[i] = String.valueOf(chars[i]);
        }
        return out;
    }
}
