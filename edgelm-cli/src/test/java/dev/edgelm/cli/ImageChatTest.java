package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.vision.TinyVlChat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jline.terminal.Terminal;
import org.jline.terminal.impl.ExternalTerminal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The interactive chat's /image command on a chat-capable tiny-vl. */
class ImageChatTest {

    @Test
    @Timeout(60)
    void imageAttachesToTheNextMessage(@TempDir Path dir) throws Exception {
        Path model = TinyVlChat.write(Files.createDirectory(dir.resolve("tiny-vl-chat")));
        Path image = Path.of("src/test/resources/fixtures/qwen35/tiny-vl/golden/image.png");
        PipedOutputStream keys = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(keys, 1 << 16);
        InteractiveChatTest.Screen screen = new InteractiveChatTest.Screen();
        Terminal terminal = new ExternalTerminal("test", "xterm-256color", stdin, screen, StandardCharsets.UTF_8);
        screen.terminal = terminal;
        ProcessContext io = new ProcessContext(new ByteArrayInputStream(new byte[0]), true, false, () -> terminal, Map.of());
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Main.execute(io, new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true), "run", model.toString(), "--max-tokens", "4", "--threads", "1"));
        String prompt = ReplLoop.PROMPT;
        screen.waitFor(prompt, 1);
        type(keys, "/image " + dir.resolve("missing.png") + "\n");
        screen.waitFor("no such image file", 1);
        screen.waitFor(prompt, 2);
        type(keys, "/image " + image + "\n");
        screen.waitFor("attached to your next message", 1);
        screen.waitFor(prompt, 3);
        type(keys, "What is it?\n");
        screen.waitFor(prompt, 4);
        String shown = screen.text();
        assertTrue(!shown.substring(shown.indexOf("attached to your next message")).contains("error:"), shown);
        type(keys, "\u0004");
        assertEquals(0, exit.get(30, TimeUnit.SECONDS), err.toString());
    }

    private static void type(OutputStream keys, String s) throws IOException {
        keys.write(s.getBytes(StandardCharsets.UTF_8));
        keys.flush();
    }
}
