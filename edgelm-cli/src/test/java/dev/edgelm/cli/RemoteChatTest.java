package dev.edgelm.cli;

import static dev.edgelm.chat.TinyChat.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.server.TestServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jline.terminal.Terminal;
import org.jline.terminal.impl.ExternalTerminal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code edgelm run --server URL} on a terminal: the interactive chat through a server on loopback. The replies
 * are the fixture's goldens (so the history goes to the server as the local chat renders it), the second turn
 * reuses the first turn's state on the server, Ctrl+C stops a reply, and /reset, /bye work.
 */
class RemoteChatTest {

    private static double metric(String base, String name) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\S+)$").matcher(body);
        assertTrue(m.find(), name);
        return Double.parseDouble(m.group(1));
    }

    @Test
    @Timeout(900)
    void twoTurnsThroughTheServerACancelAResetAndAnExit() throws Exception {
        try (TestServer s = new TestServer(2, 8)) {
            PipedOutputStream keys = new PipedOutputStream();
            PipedInputStream stdin = new PipedInputStream(keys, 1 << 16);
            InteractiveChatTest.Screen screen = new InteractiveChatTest.Screen();
            Terminal terminal = new ExternalTerminal("test", "xterm-256color", stdin, screen, StandardCharsets.UTF_8);
            screen.terminal = terminal;
            ProcessContext io = new ProcessContext(new ByteArrayInputStream(new byte[0]), true, false, () -> terminal, Map.of());
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Main.execute(io, new PrintWriter(out, true),
                    new PrintWriter(err, true), "run", TestServer.MODEL_ID, "--server", s.base, "--system", TinyChat.SYSTEM,
                    "--max-tokens", "24", "--temperature", "0"));
            String prompt = ReplLoop.PROMPT;

            await(screen, prompt, 1, exit, err);
            assertTrue(screen.text().contains("on " + s.base), screen.text());
            type(keys, TinyChat.TURN1 + "\n");
            await(screen, prompt, 2, exit, err);
            assertTrue(screen.text().contains(text("turn1_reply")), screen.text());
            type(keys, TinyChat.TURN2 + "\n");
            await(screen, prompt, 3, exit, err);
            // the golden's start (the test screen turns bytes into chars one by one, so text past a non-ASCII
            // character does not compare)
            assertTrue(screen.text().contains(text("turn2_reply").substring(0, 40)), "turn 2 with turn 1 in its history: " + screen.text());
            assertEquals(TinyChat.SHARED_TURN1_TURN2, metric(s.base, "edgelm_prompt_tokens_cached_total"),
                    "turn 2 took the tokens it shares with turn 1 from the server's cache");

            type(keys, "/reset\n");
            await(screen, "(conversation cleared)", 1, exit, err);
            await(screen, prompt, 4, exit, err);
            type(keys, TinyChat.TURN1 + "\n");
            await(screen, prompt, 5, exit, err);
            // turn 2 again, cancelled after its first words (the golden turn 2 starts " jobs While events")
            String before = screen.text();
            screen.interruptWhenShown("While");
            type(keys, TinyChat.TURN2 + "\n");
            await(screen, prompt, 6, exit, err);
            String after = screen.text().substring(before.length());
            assertTrue(after.contains("(stopped)"), after);
            assertTrue(!after.contains(text("turn2_reply").substring(0, 40)), "the reply did not run on: " + after);

            // each refused as a local run refuses it, or as the API would (then every later turn would be a 400),
            // and not kept: JSON has no NaN
            String[][] refused = {
                {"/set temperature NaN", "error: /set temperature: must be a finite number"},
                {"/set top_p 0", "error: /set top_p: top-p must be in (0, 1]"},
                {"/set temperature 150", "error: /set temperature: must be between 0 and 100, got 150"},
                {"/set presence_penalty 3", "error: /set presence_penalty: must be between -2 and 2, got 3"},
                {"/set top_k 3000000000", "error: /set top_k: must be between 0 and 2147483647, got 3000000000"},
                {"/set seed 1e19", "error: /set seed: '1e19' is not a whole number"}};
            for (String[] c : refused) {
                type(keys, c[0] + "\n");
                await(screen, c[1], 1, exit, err);
            }
            type(keys, "/save x.json\n");
            await(screen, "not available with --server", 1, exit, err);
            type(keys, "/bye\n");
            assertEquals(0, exit.get(180, TimeUnit.SECONDS), err.toString());
        }
    }

    /**
     * Waits until {@code text} has been shown {@code times} times: up to 3 minutes, since a fresh CLI and the
     * first forward passes on a busy machine run in the interpreter; an early exit of the chat says why.
     */
    private static void await(InteractiveChatTest.Screen screen, String text, int times, CompletableFuture<Integer> exit,
                              StringWriter err) throws Exception {
        for (int i = 0; i < 1800 && count(screen.text(), text) < times; i++) {
            if (exit.isDone()) {
                throw new AssertionError("the chat ended early (" + exit.get() + "): " + err + "\nscreen:\n" + screen.text());
            }
            Thread.sleep(100);
        }
        if (count(screen.text(), text) < times) {
            throw new AssertionError("timed out waiting for '" + text + "' x" + times + "; screen:\n" + screen.text());
        }
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int at = s.indexOf(part); at >= 0; at = s.indexOf(part, at + part.length())) {
            n++;
        }
        return n;
    }

    private static void type(OutputStream keys, String s) throws IOException {
        keys.write(s.getBytes(StandardCharsets.UTF_8));
        keys.flush();
    }
}
