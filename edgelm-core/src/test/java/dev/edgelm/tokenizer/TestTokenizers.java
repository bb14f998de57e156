package dev.edgelm.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** The test tokenizers, loaded once per test run. */
final class TestTokenizers {
    static final Path TINY_CHAT = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
    private static Tokenizer qwen3;
    private static Tokenizer tinyChat;

    private TestTokenizers() {}

    /** The full Qwen2/2.5/3 tokenizer (151,643 BPE tokens + 26 added). */
    static synchronized Tokenizer qwen3() {
        if (qwen3 == null) {
            try (InputStream in = new GZIPInputStream(resource("tokenizers/qwen3/tokenizer.json.gz"), 1 << 16)) {
                qwen3 = TokenizerJson.read(in, "qwen3/tokenizer.json.gz");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return qwen3;
    }

    /** The truncated tokenizer of the tiny-chat checkpoint (8192 BPE tokens + 26 added). */
    static synchronized Tokenizer tinyChat() {
        if (tinyChat == null) {
            tinyChat = TokenizerJson.load(TINY_CHAT.resolve("tokenizer.json"));
        }
        return tinyChat;
    }

    static InputStream resource(String name) {
        InputStream in = TestTokenizers.class.getClassLoader().getResourceAsStream(name);
        if (in == null) {
            throw new IllegalStateException("missing test resource " + name);
        }
        return in;
    }

    static JsonNode json(String name) {
        try (InputStream in = resource(name)) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int[] ids(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }
}
