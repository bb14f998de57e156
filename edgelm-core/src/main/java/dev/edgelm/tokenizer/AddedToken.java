package dev.edgelm.tokenizer;

/**
 * A token matched in the text before normalization and BPE ({@code added_tokens} of a {@code tokenizer.json},
 * control and user-defined tokens of a GGUF). {@code special} tokens can be skipped when decoding and treated as
 * plain text when encoding with split-special; {@code lstrip}/{@code rstrip} make the match swallow the white
 * space on that side; {@code singleWord} only matches where the content is not part of a longer word.
 */
public record AddedToken(int id, String content, boolean special, boolean lstrip, boolean rstrip, boolean singleWord) {
    public AddedToken {
        if (content.isEmpty()) {
            throw new IllegalArgumentException("added token " + id + " has empty content");
        }
    }

    /** A plain added token: no stripping, matched anywhere. */
    public static AddedToken of(int id, String content, boolean special) {
        return new AddedToken(id, content, special, false, false, false);
    }
}
