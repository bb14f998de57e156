package dev.edgelm.cli;

import static dev.edgelm.chat.TinyChat.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jline.terminal.Terminal;
import org.jline.terminal.impl.ExternalTerminal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The interactive chat driven through a JLine terminal built on streams: keys typed into a pipe, the screen read
 * back. Each step waits for the screen to show what a person would wait for (the next prompt).
 */
class InteractiveChatTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** What the terminal shows; can press Ctrl+C (raise SIGINT on the terminal) when some text appears. */
    static final class Screen extends OutputStream {
        private final StringBuilder shown = new StringBuilder();
        volatile Terminal terminal;
        private String interruptOn;
        private int interruptFrom;

        @Override
        public synchronized void write(int b) {
            shown.append((char) b);
            check();
            notifyAll();
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            shown.append(new String(b, off, len, StandardCharsets.UTF_8));
            check();
            notifyAll();
        }

        /** Presses Ctrl+C, on the thread that writes, as soon as {@code text} appears after what is shown now. */
        synchronized void interruptWhenShown(String text) {
            interruptOn = text;
            interruptFrom = shown.length();
        }

        private void check() {
            if (interruptOn != null && shown.indexOf(interruptOn, interruptFrom) >= 0) {
                interruptOn = null;
                terminal.raise(Terminal.Signal.INT);
            }
        }

        /** The screen's text, the terminal's CR LF line ends back to LF. */
        synchronized String text() {
            return shown.toString().replace("\r\n", "\n");
        }

        /** Waits until {@code text} has been shown {@code times} times. */
        synchronized void waitFor(String text, int times) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (count(text) < times) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("timed out waiting for '" + text + "' x" + times + "; screen:\n" + shown);
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        private int count(String text) {
            int n = 0;
            for (int at = shown.indexOf(text); at >= 0; at = shown.indexOf(text, at + text.length())) {
                n++;
            }
            return n;
        }
    }

    @Test
    @Timeout(60)
    void twoTurnsACancelAResetAndAnExit() throws Exception {
        PipedOutputStream keys = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(keys, 1 << 16);
        Screen screen = new Screen();
        // JLine's terminal emulation on plain streams: its line discipline turns Ctrl+C into SIGINT, as a tty does
        Terminal terminal = new ExternalTerminal("test", "xterm-256color", stdin, screen, StandardCharsets.UTF_8);
        screen.terminal = terminal;
        ProcessContext io = new ProcessContext(new ByteArrayInputStream(new byte[0]), true, false, () -> terminal, Map.of());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Main.execute(io, new PrintWriter(out, true),
                new PrintWriter(err, true), "run", TinyChat.DIR.toString(), "--system", TinyChat.SYSTEM, "--max-tokens", "24",
                "--threads", "1"));
        String prompt = ReplLoop.PROMPT;

        screen.waitFor(prompt, 1);
        type(keys, "this line is dropped");
        screen.waitFor("dropped", 1); // echoed: the line editor has it
        type(keys, "\u0003"); // Ctrl+C at the prompt drops the line
        screen.waitFor(prompt, 2);
        type(keys, TinyChat.TURN1 + "\n");
        screen.waitFor(prompt, 3);
        assertTrue(screen.text().contains(text("turn1_reply")), screen.text());
        assertTrue(!screen.text().contains("error"), "the dropped line was not sent: " + screen.text());

        // turn 2 is cancelled after its first words (golden turn 2 starts " jobs While events")
        screen.interruptWhenShown("While");
        type(keys, TinyChat.TURN2 + "\n");
        screen.waitFor(prompt, 4);
        String afterTurn2 = screen.text();
        assertTrue(afterTurn2.contains("(stopped)"), afterTurn2);
        assertTrue(!afterTurn2.contains(text("turn2_reply").substring(0, 40)), "the reply did not run on");

        type(keys, "/reset\n");
        screen.waitFor("(conversation cleared)", 1);
        screen.waitFor(prompt, 5);
        type(keys, TinyChat.TURN1 + "\n");
        screen.waitFor(prompt, 6);
        String shown = screen.text();
        assertEquals(2, count(shown, text("turn1_reply")), "after /reset, turn 1 again gives the golden reply\n" + shown);

        type(keys, "/help\n");
        screen.waitFor("/no-think", 1);
        screen.waitFor(prompt, 7);
        type(keys, "/think\n");
        screen.waitFor(prompt, 8);
        type(keys, TinyChat.THINK + "\n");
        screen.waitFor(prompt, 9);
        assertTrue(screen.text().substring(shown.length()).contains("\033[2m"), "thinking is shown dim");
        type(keys, "\u0004"); // Ctrl+D
        assertEquals(0, exit.get(WAIT.toSeconds(), TimeUnit.SECONDS), err.toString());
    }

    @Test
    @Timeout(60)
    void setMultiLineSaveLoadStatsAndTheLeaveHint(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        PipedOutputStream keys = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(keys, 1 << 16);
        Screen screen = new Screen();
        Terminal terminal = new ExternalTerminal("test", "xterm-256color", stdin, screen, StandardCharsets.UTF_8);
        screen.terminal = terminal;
        ProcessContext io = new ProcessContext(new ByteArrayInputStream(new byte[0]), true, false, () -> terminal,
                Map.of("NO_COLOR", "1"));
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Main.execute(io, new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true), "run", TinyChat.DIR.toString(), "-n", "24", "-t", "1"));
        String prompt = ReplLoop.PROMPT;
        screen.waitFor(prompt, 1);
        type(keys, "\u0003"); // Ctrl+C on an empty line: how to leave
        screen.waitFor(ReplLoop.LEAVE_HINT, 1);
        screen.waitFor(prompt, 2);

        type(keys, "/set system " + TinyChat.SYSTEM + "\n");
        screen.waitFor("(system prompt set)", 1);
        type(keys, "/set temperature 0\n");
        screen.waitFor("(temperature = 0)", 1);
        type(keys, "/set temperature warm\n");
        screen.waitFor("is not a number", 1);
        // the first turn's message typed over two lines between triple quotes
        String[] words = TinyChat.TURN1.split(" ", 2);
        type(keys, "\"\"\"" + words[0] + "\n");
        screen.waitFor(ReplLoop.CONTINUATION, 1);
        type(keys, words[1] + "\"\"\"\n");
        screen.waitFor(prompt, 6);
        // the two lines were one message; joined by a newline it differs from TURN1, so compare with a session's reply
        String expected = RunCommandTest.greedyReplyWithSystem(words[0] + "\n" + words[1]);
        assertTrue(screen.text().contains(expected), expected + " in\n" + screen.text());

        type(keys, "/stats\n");
        screen.waitFor("time to first token:", 1);
        java.nio.file.Path saved = dir.resolve("chat.json");
        type(keys, "/save " + saved + "\n");
        screen.waitFor("(saved 2 messages", 1);
        com.fasterxml.jackson.databind.JsonNode o = new com.fasterxml.jackson.databind.ObjectMapper().readTree(saved.toFile());
        assertEquals(TinyChat.SYSTEM, o.get("system").asText());
        assertEquals(words[0] + "\n" + words[1], o.get("messages").get(0).get("content").asText());
        assertEquals(expected, o.get("messages").get(1).get("content").asText());

        type(keys, "/reset\n");
        screen.waitFor("(conversation cleared)", 1);
        type(keys, "/load " + saved + "\n");
        screen.waitFor("(loaded 2 messages", 1);
        screen.waitFor("the model state too", 1);
        type(keys, "/save " + dir.resolve("again.json") + "\n");
        screen.waitFor("(saved 2 messages", 2);
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertEquals(json.readTree(java.nio.file.Files.readString(saved).replace("chat.json.state", "again.json.state")),
                json.readTree(dir.resolve("again.json").toFile()), "what /load read is what /save wrote");
        assertEquals(-1, java.nio.file.Files.mismatch(ChatRepl.stateFile(saved), ChatRepl.stateFile(dir.resolve("again.json"))),
                "the model state loaded is the one saved");
        // the loaded chat continues from the saved state: the second turn reads only its own tokens, and answers
        // as an unbroken conversation does
        int shownBefore = screen.text().length();
        type(keys, TinyChat.TURN2 + "\n");
        screen.waitFor(prompt, 12);
        type(keys, "/stats\n");
        screen.waitFor("time to first token:", 2);
        String turn2 = screen.text().substring(shownBefore);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("prompt tokens: +([0-9]+) \\(([0-9]+) read now, ([0-9]+) reused")
                .matcher(turn2);
        assertTrue(m.find(), turn2);
        assertTrue(Integer.parseInt(m.group(3)) > 0 && Integer.parseInt(m.group(2)) < Integer.parseInt(m.group(1)) / 2,
                "most of the conversation came from the saved state: " + m.group());
        assertTrue(turn2.contains(unbrokenSecondReply(words[0] + "\n" + words[1])), turn2);
        type(keys, "/bye\n");
        assertEquals(0, exit.get(WAIT.toSeconds(), TimeUnit.SECONDS), err.toString());
        assertTrue(!screen.text().contains("\033[2m"), "NO_COLOR: no dim text");
    }

    /** The second reply of an unbroken two-turn chat (system prompt, {@code first}, then TURN2), greedy, 24 tokens. */
    private static String unbrokenSecondReply(String first) {
        dev.edgelm.template.ChatFormat format = dev.edgelm.template.ChatFormat.load(TinyChat.DIR);
        try (dev.edgelm.engine.Engine engine = dev.edgelm.engine.Engine.load(TinyChat.DIR,
                dev.edgelm.engine.EngineOptions.defaults().withThreads(1))) {
            dev.edgelm.chat.Conversation c = dev.edgelm.chat.Conversation.start(engine, format);
            c.setSystem(TinyChat.SYSTEM);
            dev.edgelm.engine.GenerationOptions greedy = dev.edgelm.engine.GenerationOptions.builder().maxNewTokens(24).build();
            c.send(first, greedy, dev.edgelm.chat.ChatListener.NONE);
            return c.send(TinyChat.TURN2, greedy, dev.edgelm.chat.ChatListener.NONE).answer();
        }
    }

    @Test
    @Timeout(120)
    void aLongPastedLineIsReadWithoutARedrawPerKey() throws Exception {
        for (int size : new int[] {48_000, 150_000}) {
            PipedOutputStream keys = new PipedOutputStream();
            PipedInputStream stdin = new PipedInputStream(keys, 1 << 20);
            Screen screen = new Screen();
            Terminal terminal = new ExternalTerminal("test", "xterm-256color", stdin, screen, StandardCharsets.UTF_8);
            ChatLineReader reader = new ChatLineReader(terminal, "edgelm");
            String line = "word ".repeat(size / 5);
            CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> reader.readLine(ReplLoop.PROMPT));
            type(keys, line + "\n"); // keys arrive one by one, as a terminal without bracketed paste sends a paste
            assertEquals(line, read.get(100, TimeUnit.SECONDS));
            assertTrue(reader.redraws() < size / 50, reader.redraws() + " redraws for " + size + " keys");
            terminal.close();
        }
    }

    private static void type(OutputStream keys, String s) throws IOException {
        keys.write(s.getBytes(StandardCharsets.UTF_8));
        keys.flush();
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int at = s.indexOf(part); at >= 0; at = s.indexOf(part, at + part.length())) {
            n++;
        }
        return n;
    }
}
