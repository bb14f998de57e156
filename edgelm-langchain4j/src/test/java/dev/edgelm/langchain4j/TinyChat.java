package dev.edgelm.langchain4j;

import dev.edgelm.format.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The main project's tiny chat checkpoint (random weights, a real Qwen tokenizer and the stock Qwen3.5 template)
 * and its goldens from Hugging Face transformers (see the fixture README, section tiny-chat).
 */
final class TinyChat {
    static final Path DIR = Path.of(System.getProperty("edgelm.tinyChat", "../src/test/resources/fixtures/qwen35/tiny-chat"));
    static final String SYSTEM = "You are a helpful assistant.";
    static final String TURN1 = "What is the capital of France? Answer in one word.";
    static final String TURN2 = "And of Germany?";
    static final int IM_END = 8194;

    private static EdgeLmModel shared;

    private TinyChat() {}

    /** One model for the whole test run: two generations at once, greedy as the checkpoint's config says. */
    static synchronized EdgeLmModel model() {
        if (shared == null) {
            shared = EdgeLmModel.open(DIR.toString(), new EdgeLmModel.Settings(1, 2048, 2, 64L << 20));
            // one short reply first, so that the kernels' JIT compilation does not fall inside a suite's own
            // time limit (LangChain4j's streaming test handler waits 60 s for a reply)
            EdgeLmChatModel.builder().model(shared).maxTokens(2).build().chat("hi");
        }
        return shared;
    }

    static String text(String name) {
        try {
            return Files.readString(DIR.resolve("golden/" + name + ".txt"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int[] ids(String name) {
        return Npy.read(DIR.resolve("golden/" + name + ".npy")).toIntArray();
    }

    /** The generated ids of a case without the stop token that ended it. */
    static int[] replyIds(String name) {
        int[] g = ids(name + "_generated_ids");
        return g[g.length - 1] == IM_END ? Arrays.copyOf(g, g.length - 1) : g;
    }
}
