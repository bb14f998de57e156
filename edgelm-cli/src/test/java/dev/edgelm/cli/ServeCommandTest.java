package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.server.TestServer;
import org.junit.jupiter.api.Test;

/** The serve, bench-serve and run --server commands (a server on loopback; the safety check without a model). */
class ServeCommandTest {
    @Test
    void anotherHostWithoutAKeyRefusesToStart() {
        CliRunner r = CliRunner.run("serve", "no-such-model.gguf", "--host", "0.0.0.0", "--port", "0");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("refusing to listen on 0.0.0.0 without an API key"), r.err());
        assertTrue(r.err().contains("--api-key"), r.err());
    }

    @Test
    void badNumbersAreRefused() {
        CliRunner r = CliRunner.run("serve", "x.gguf", "--parallel", "0");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("--parallel"), r.err());
    }

    @Test
    void runWithServerAndBenchServe() {
        try (TestServer s = new TestServer(2, 8)) {
            CliRunner r = CliRunner.run("run", "tiny-chat", "--server", s.base, "--system", TinyChat.SYSTEM,
                    "--prompt", TinyChat.TURN1, "--max-tokens", "24", "--temperature", "0");
            assertEquals(0, r.exitCode(), r.err());
            assertEquals(TinyChat.text("turn1_reply").strip(), r.out().strip(), "the golden reply, through the server");

            CliRunner b = CliRunner.run("bench-serve", s.base, "--clients", "2", "--requests", "4", "--max-tokens", "4");
            assertEquals(0, b.exitCode(), b.err());
            assertTrue(b.out().contains("requests: 4 ok, 0 failed, 2 clients"), b.out());
            assertTrue(b.out().contains("time to first token: p50"), b.out());
        }
        CliRunner down = CliRunner.run("run", "--server", "http://127.0.0.1:1", "--prompt", "hi");
        assertEquals(1, down.exitCode());
        assertTrue(down.err().contains("cannot connect to http://127.0.0.1:1: connection refused"), down.err());
    }

    @Test
    void anUnknownServerHostIsNamedWithTheReason() {
        CliRunner r = CliRunner.run("run", "--server", "http://nosuchhost.invalid:8080", "--prompt", "hi");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("cannot connect to http://nosuchhost.invalid:8080: unknown host 'nosuchhost.invalid'"), r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
    }

    /** What a local run refuses is refused before it goes to a server: one line naming the option, no stack trace. */
    @Test
    void samplingOptionsForAServerAreCheckedAsLocally() {
        String[][] bad = {{"--temperature", "NaN"}, {"--temperature", "-1"}, {"--temperature", "Infinity"},
            {"--top-p", "0"}, {"--top-p", "NaN"}, {"--min-p", "2"}, {"--top-k", "-1"}, {"--repeat-penalty", "0"},
            {"--presence-penalty", "-Infinity"}, {"--frequency-penalty", "NaN"}};
        for (String[] option : bad) {
            CliRunner r = CliRunner.run("run", "--server", "http://127.0.0.1:1", "--prompt", "hi", option[0], option[1]);
            String what = String.join(" ", option) + ": " + r.err();
            assertEquals(1, r.exitCode(), what);
            assertTrue(r.err().contains(option[0] + ": "), what);
            assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), "no stack trace: " + what);
            assertFalse(r.err().contains("cannot connect"), "refused before anything is sent: " + what);
        }
    }
}
