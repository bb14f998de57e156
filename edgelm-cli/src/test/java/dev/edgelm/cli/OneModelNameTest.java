package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.hub.FakeHub;
import dev.edgelm.hub.ModelResolver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Hub id works with every command that takes a model, and loads the same file in each: the int8 GGUF that
 * {@code run} converted the download to. Model management ({@code pull}, {@code list}, {@code rm}), {@code --offline},
 * {@code --keep-checkpoint} and the advice when the Hub cannot be reached. A local fake Hub on 127.0.0.1.
 */
class OneModelNameTest {
    static final String NAME = "test/tiny-chat";
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path cache;

    Map<String, String> env(FakeHub hub, String... more) {
        Map<String, String> env = new HashMap<>();
        env.put("HF_ENDPOINT", hub == null ? "http://127.0.0.1:1" : hub.endpoint().toString());
        env.put("EDGELM_CACHE", cache.toString());
        for (int i = 0; i < more.length; i += 2) {
            env.put(more[i], more[i + 1]);
        }
        return env;
    }

    CliRunner run(Map<String, String> env, String... args) {
        return run(env, new byte[0], args);
    }

    CliRunner run(Map<String, String> env, byte[] stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(ProcessContext.piped(stdin).withEnv(env), new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRunner(code, out.toString(), err.toString());
    }

    Path snapshot() {
        return cache.resolve("hub/models--test--tiny-chat/snapshots/" + FakeHub.COMMIT);
    }

    @Test
    void theHubIdRunDownloadedWorksWithEveryCommandAndLoadsTheSameFile(@TempDir Path work) throws Exception {
        Path gguf = snapshot().resolve("edgelm-int8.gguf");
        try (FakeHub hub = FakeHub.serving(NAME, TinyChat.DIR)) {
            Map<String, String> env = env(hub);
            CliRunner r = run(env, "run", NAME, TinyChat.TURN1, "-n", "8", "-t", "1", "--verbose");
            assertEquals(0, r.exitCode(), r.err());
            assertTrue(r.err().contains("loading " + gguf + " ("), "--verbose names the file: " + r.err());
            assertTrue(r.err().contains(", int8) ..."), r.err());
            assertTrue(r.err().contains("time to first token:") && r.err().contains("decode:"), "timings: " + r.err());
            assertTrue(Files.isRegularFile(gguf));
            assertFalse(Files.exists(snapshot().resolve("model.safetensors")), "the safetensors go after the conversion");
        }
        // from here on without any Hub: the same name is found in the cache
        Map<String, String> env = env(null, "HF_HUB_OFFLINE", "1");
        JsonNode inspect = JSON.readTree(ok(run(env, "inspect", NAME, "--json")).out());
        assertEquals(gguf.toString(), inspect.get("path").asText());
        assertEquals("int8", inspect.get("quantisation").asText());
        assertEquals(Files.size(gguf), inspect.get("file_bytes").asLong());
        assertEquals("gguf", inspect.get("format").asText());
        assertTrue(inspect.get("context_length").asLong() > 0, inspect.toString());
        assertEquals(8194, inspect.get("stop_tokens").get(0).get("id").asInt(), "<|im_end|> (fixture README)");

        assertEquals("8194" + System.lineSeparator(), ok(run(env, "tokenize", NAME, "--text", "<|im_end|>")).out());
        Path messages = work.resolve("m.json");
        Files.writeString(messages, "[{\"role\": \"system\", \"content\": \"" + TinyChat.SYSTEM + "\"}, {\"role\": \"user\", "
                + "\"content\": \"" + TinyChat.TURN1 + "\"}]");
        assertEquals(TinyChat.text("turn1_prompt"), ok(run(env, "template", NAME, "--messages", messages.toString())).out());
        ok(run(env, "score", NAME, "--tokens", "1,2,3", "-o", work.resolve("l.npy").toString()));
        JsonNode bench = JSON.readTree(ok(run(env, "benchmark", NAME, "-p", "4", "-d", "2", "--runs", "1", "-t", "1",
                "--json")).out());
        assertEquals(gguf.toString(), bench.get("model_filename").asText(), "benchmark loads what run loads");
        assertEquals("int8", bench.get("model_type").asText());
        ModelResolver.Options options = ModelResolver.Options.defaults().withEnv(env).withProgress(null);
        try (Engine engine = Engine.open(NAME, EngineOptions.defaults().withThreads(1), options)) {
            assertEquals(gguf, engine.modelPath(), "Engine.open loads what run loads");
        }
        CliRunner list = ok(run(env, "list"));
        assertTrue(list.out().contains(NAME) && list.out().contains("main (0123456)") && list.out().contains("int8"), list.out());
        JsonNode listed = JSON.readTree(ok(run(env, "list", "--json")).out()).get(0);
        assertEquals(NAME, listed.get("name").asText());
        assertEquals(FakeHub.COMMIT, listed.get("commit").asText());
        assertEquals("[\"int8\"]", listed.get("quantisations").toString(), "no checkpoint kept");
        assertTrue(listed.get("last_used").isTextual());

        CliRunner removed = ok(run(env, "rm", NAME));
        assertTrue(removed.out().startsWith("removed " + NAME + " ("), removed.out());
        assertFalse(Files.exists(cache.resolve("hub/models--test--tiny-chat")));
        CliRunner again = run(env, "rm", NAME);
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("not in the cache") && again.err().contains("edgelm list"), again.err());
    }

    @Test
    void convertTakesAHubIdAndDefaultsToInt8LikeRun(@TempDir Path work) throws Exception {
        try (FakeHub hub = FakeHub.serving(NAME, TinyChat.DIR)) {
            Path out = work.resolve("c.gguf");
            ok(run(env(hub), "convert", NAME, "-o", out.toString()));
            JsonNode inspect = JSON.readTree(ok(run(env(hub), "inspect", out.toString(), "--json")).out());
            assertEquals("int8", inspect.get("quantisation").asText());
            assertTrue(Files.isRegularFile(snapshot().resolve("model.safetensors")), "convert keeps the checkpoint it read");
        }
    }

    @Test
    void pullKeepsTheCheckpointOnRequestAndRunUsesThePulledQuantisation() throws Exception {
        try (FakeHub hub = FakeHub.serving(NAME, TinyChat.DIR)) {
            CliRunner pulled = ok(run(env(hub), "pull", NAME, "--quant", "int4", "--keep-checkpoint"));
            Path int4 = snapshot().resolve("edgelm-int4.gguf");
            assertTrue(pulled.out().contains(int4 + " (") && pulled.out().contains(", int4)"), pulled.out());
            assertTrue(Files.isRegularFile(snapshot().resolve("model.safetensors")), "--keep-checkpoint");
            JsonNode listed = JSON.readTree(ok(run(env(hub), "list", "--json")).out()).get(0);
            assertEquals("[\"int4\",\"checkpoint\"]", listed.get("quantisations").toString());
            int listings = hub.requestCount("/api/");
            JsonNode inspect = JSON.readTree(ok(run(env(hub), "inspect", NAME, "--json")).out());
            assertEquals(int4.toString(), inspect.get("path").asText(), "the only converted file is the one used");
            assertEquals(listings, hub.requestCount("/api/"), "a converted model is used without asking the Hub");
            CliRunner upToDate = ok(run(env(hub), "pull", NAME, "--quant", "int4"));
            assertTrue(upToDate.out().contains(int4.toString()), upToDate.out());
        }
    }

    @Test
    void withoutNetworkOrCacheTheErrorSaysWhatToDo() {
        CliRunner r = run(env(null), "run", NAME, "hi");
        assertEquals(1, r.exitCode());
        String e = r.err();
        assertTrue(e.startsWith("error: cannot reach the Hugging Face Hub at http://127.0.0.1:1"), e);
        assertFalse(e.contains("Exception"), "no Java class names: " + e);
        for (String wayOut : new String[] {"HF_ENDPOINT", "edgelm list", ".gguf", "tiny-chat"}) {
            assertTrue(e.contains(wayOut), wayOut + " in " + e);
        }
        assertFalse(e.contains("\tat "), e);

        CliRunner offline = run(env(null), "inspect", NAME, "--offline");
        assertEquals(1, offline.exitCode());
        assertTrue(offline.err().contains("offline") && offline.err().contains("not in the cache")
                && offline.err().contains("edgelm pull " + NAME), offline.err());
        CliRunner pull = run(env(null, "HF_HUB_OFFLINE", "1"), "pull", NAME);
        assertEquals(1, pull.exitCode());
        assertTrue(pull.err().contains("pull needs the network"), pull.err());
    }

    @Test
    void aQuestionInPlaceOfTheModelIsThePromptForTheDefaultModel() {
        CliRunner r = run(env(null), "run", "Why is the sky blue?");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains(RunCommand.DEFAULT_MODEL + " is not in the cache yet"), "the default model was asked for: " + r.err());
    }

    @Test
    void aFolderThatIsNotAModelSaysSo(@TempDir Path empty) {
        for (String command : new String[] {"run", "inspect", "tokenize", "benchmark"}) {
            CliRunner r = run(env(null), command, empty.toString(), "--text", "x");
            if (command.equals("run") || command.equals("benchmark")) {
                r = run(env(null), command, empty.toString(), "-p", "1");
            }
            if (command.equals("inspect")) {
                r = run(env(null), command, empty.toString());
            }
            assertEquals(1, r.exitCode(), command);
            assertTrue(r.err().startsWith("error: no config.json or .gguf in " + empty), command + ": " + r.err());
        }
    }

    private static CliRunner ok(CliRunner r) {
        assertEquals(0, r.exitCode(), r.err());
        return r;
    }
}
