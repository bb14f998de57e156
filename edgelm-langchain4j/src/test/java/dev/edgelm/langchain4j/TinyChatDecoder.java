package dev.edgelm.langchain4j;

import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;

/** The reply text of generated tokens, special tokens skipped (as {@code edgelm run} decodes them). */
final class TinyChatDecoder {
    private TinyChatDecoder() {}

    static TokenDecoder of(ChatFormat format) {
        return () -> {
            IncrementalDecoder d = format.tokenizer().newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int id) {
                    return d.accept(id);
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
    }
}
