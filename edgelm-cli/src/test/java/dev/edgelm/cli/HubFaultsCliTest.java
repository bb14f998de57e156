package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.hub.FakeHub;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm run owner/name} against a Hub that misbehaves: a clear error, in bounded time, no stack trace. */
@Timeout(120)
class HubFaultsCliTest {
    @TempDir
    Path cache;

    CliRunner run(FakeHub hub, Map<String, String> extraEnv, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Map<String, String> env = new java.util.HashMap<>(Map.of("HF_ENDPOINT", hub.endpoint().toString(),
                "EDGELM_CACHE", cache.toString()));
        env.putAll(extraEnv);
        int code = Main.execute(ProcessContext.none().withEnv(env), new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRunner(code, out.toString(), err.toString());
    }

    @Test
    void aHubAnswering416ForeverEndsWithAClearError() throws Exception {
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            hub.always416 = true;
            CliRunner r = run(hub, Map.of(), "run", "test/tiny-chat", "--prompt", "Hi", "--threads", "1");
            assertEquals(1, r.exitCode(), r.err());
            assertTrue(r.err().startsWith("error: ") && r.err().contains("download of test/tiny-chat") && r.err().contains("gave up after 5 attempts"), r.err());
            assertEquals(5, hub.requestCount("/cdn/model.safetensors"));
            assertFalse(r.err().contains("\tat "), "no stack trace");
        }
    }

    @Test
    void aRedirectToFtpIsAClearError() throws Exception {
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            hub.cdnLocation = "ftp://127.0.0.1/x";
            CliRunner r = run(hub, Map.of(), "run", "test/tiny-chat", "--prompt", "Hi", "--threads", "1");
            assertEquals(1, r.exitCode(), r.err());
            assertTrue(r.err().contains("error: ") && r.err().contains("'ftp://127.0.0.1/x', which is not an http(s) URL"), r.err());
        }
    }

    @Test
    void aStalledBodyIsResumedAfterTheReadTimeout() throws Exception {
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            hub.stallAfter = 1000;
            CliRunner r = run(hub, Map.of("EDGELM_HUB_TIMEOUT", "1"), "run", "test/tiny-chat", "--prompt", "Hi",
                    "--max-tokens", "2", "--threads", "1");
            assertEquals(0, r.exitCode(), r.err());
            assertEquals(2, hub.requestCount("/cdn/model.safetensors"));
        }
    }

    @Test
    void aBadTimeoutSettingIsAClearError() throws Exception {
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            CliRunner r = run(hub, Map.of("EDGELM_HUB_TIMEOUT", "soon"), "run", "test/tiny-chat", "--prompt", "Hi");
            assertEquals(1, r.exitCode(), r.err());
            assertTrue(r.err().contains("EDGELM_HUB_TIMEOUT 'soon'"), r.err());
        }
    }
}
