package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.SnapshotGguf;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.hub.FakeHub;
import dev.edgelm.template.ChatFormat;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm run owner/name}: downloaded from a (local, fake) Hub, converted once to int8 GGUF, reused. */
class RunFromHubTest {
    @TempDir
    Path cache;

    CliRunner run(FakeHub hub, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ProcessContext context = ProcessContext.none().withEnv(Map.of("HF_ENDPOINT", hub.endpoint().toString(),
                "EDGELM_CACHE", cache.toString()));
        int code = Main.execute(context, new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRunner(code, out.toString(), err.toString());
    }

    /** The reply of the int8 conversion of tiny-chat, made here by hand: what the command must print. */
    String expectedReply(Path dir) {
        Path gguf = dir.resolve("by-hand-int8.gguf");
        GgufConverter.convert(TinyChat.DIR, gguf, QuantRecipe.INT8, w -> { }, null);
        try (Engine engine = Engine.load(gguf, EngineOptions.defaults().withThreads(1))) {
            Conversation c = Conversation.start(engine, ChatFormat.load(gguf));
            c.setSystem(TinyChat.SYSTEM);
            return c.send(TinyChat.TURN1, GenerationOptions.builder().maxNewTokens(24).build(), ChatListener.NONE).text();
        }
    }

    @Test
    void aHubIdIsDownloadedConvertedOnceAndReused(@TempDir Path work) throws Exception {
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            String[] args = {"run", "test/tiny-chat", "--system", TinyChat.SYSTEM, "--prompt", TinyChat.TURN1,
                    "--max-tokens", "24", "--threads", "1"};
            CliRunner first = run(hub, args);
            assertEquals(0, first.exitCode(), first.err());
            Path gguf = cache.resolve("hub/models--test--tiny-chat/snapshots/" + FakeHub.COMMIT + "/" + SnapshotGguf.FILE_NAME);
            assertTrue(Files.isRegularFile(gguf), "converted beside the snapshot");
            String expected = expectedReply(work);
            assertEquals(expected + "\n", first.out());

            FileTime written = Files.getLastModifiedTime(gguf);
            Files.setLastModifiedTime(gguf, FileTime.fromMillis(written.toMillis() - 60_000));
            FileTime marked = Files.getLastModifiedTime(gguf);
            int downloads = hub.requestCount("/cdn/model.safetensors");
            CliRunner second = run(hub, args);
            assertEquals(0, second.exitCode(), second.err());
            assertEquals(expected + "\n", second.out());
            assertEquals(marked, Files.getLastModifiedTime(gguf), "the converted file is reused, not written again");
            assertEquals(downloads, hub.requestCount("/cdn/model.safetensors"), "the weights are not downloaded again");
        }
    }
}
