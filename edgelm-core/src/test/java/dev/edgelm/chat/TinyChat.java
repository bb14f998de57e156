package dev.edgelm.chat;

import dev.edgelm.format.npy.Npy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** The tiny-chat fixture's goldens (see the fixtures README, section tiny-chat). */
public final class TinyChat {
    public static final Path DIR = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
    public static final String SYSTEM = "You are a helpful assistant.";
    public static final String TURN1 = "What is the capital of France? Answer in one word.";
    public static final String TURN2 = "And of Germany?";
    public static final String THINK = "Hi";
    public static final int IM_END = 8194;
    /** Tokens the turn-1 and turn-2 renders share (README: 38 ids). */
    public static final int SHARED_TURN1_TURN2 = 38;

    private TinyChat() {}

    public static int[] ids(String name) {
        return Npy.read(DIR.resolve("golden/" + name + ".npy")).toIntArray();
    }

    public static String text(String name) {
        try {
            return Files.readString(DIR.resolve("golden/" + name + ".txt"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The generated ids of a case without the stop token that ended it (if any). */
    public static int[] replyIds(String name) {
        int[] g = ids(name + "_generated_ids");
        return g[g.length - 1] == IM_END ? Arrays.copyOf(g, g.length - 1) : g;
    }
}
