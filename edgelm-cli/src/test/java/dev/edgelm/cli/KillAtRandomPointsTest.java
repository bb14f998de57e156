package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.hub.FakeHub;
import dev.edgelm.util.AtomicFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGINT, SIGTERM and SIGKILL at random points of convert, synth and a download, in a child JVM: the final path
 * holds the old file or the complete new one, never a truncated one; what a killed run leaves is a temporary file
 * named after it, which the next run removes.
 */
@Timeout(600)
class KillAtRandomPointsTest {
    static final String[] SIGNALS = {"KILL", "TERM", "INT", "KILL", "TERM"};
    static final long SEED = Long.getLong("edgelm.test.killSeed", System.nanoTime());

    @TempDir
    Path dir;

    /** Runs to the end; returns the elapsed milliseconds. */
    static long runToEnd(List<String> command, Path log) throws Exception {
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "finishes");
        assertEquals(0, p.exitValue(), Files.readString(log));
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** Starts the command, sends {@code signal} after {@code delayMs}, waits for the end (SIGKILL after 20 s). */
    static void killAfter(List<String> command, Path log, long delayMs, String signal) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(delayMs, TimeUnit.MILLISECONDS)) {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
        }
        if (!p.waitFor(20, TimeUnit.SECONDS)) { // a JVM started with SIGINT ignored does not stop for it
            p.destroyForcibly();
            p.waitFor(20, TimeUnit.SECONDS);
        }
    }

    /** Everything in {@code folder} except {@code allowed}: must be temporary files named after their writer. */
    static void onlyNamedTemporaries(Path folder, List<String> allowed) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (!allowed.contains(name)) {
                    assertTrue(name.matches("\\..+\\.\\d+-[0-9a-f]+\\.tmp"), "unexpected " + name);
                }
            }
        }
    }

    static void assertNoTemporaries(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            assertEquals(List.of(), files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList());
        }
    }

    @Test
    void convertKilledAnywhereLeavesTheOldFileOrTheWholeNewOne() throws Exception {
        Random random = new Random(SEED);
        Path out = dir.resolve("out").resolve("model.gguf");
        Files.createDirectories(out.getParent());
        Path log = dir.resolve("log.txt");
        List<String> convert = ChildJvm.edgelm("convert", TinyChat.DIR.toString(), "-o", out.toString(), "--quant", "int8");
        long full = runToEnd(convert, log);
        byte[] complete = Files.readAllBytes(out);
        byte[] old = "an older file".getBytes();
        for (String signal : SIGNALS) {
            Files.write(out, old);
            long delay = 50 + (long) (random.nextDouble() * full);
            killAfter(convert, log, delay, signal);
            byte[] now = Files.readAllBytes(out);
            assertTrue(java.util.Arrays.equals(now, old) || java.util.Arrays.equals(now, complete),
                    "SIG" + signal + " after " + delay + " ms (seed " + SEED + "): " + now.length + " bytes in the final place");
            onlyNamedTemporaries(out.getParent(), List.of("model.gguf"));
        }
        runToEnd(convert, log);
        assertArrayEquals(complete, Files.readAllBytes(out));
        assertNoTemporaries(out.getParent());
    }

    @Test
    void synthKilledMidWriteLeavesTheOldFile() throws Exception {
        Random random = new Random(SEED + 1);
        Path out = dir.resolve("synth.gguf");
        Path log = dir.resolve("log.txt");
        // the 0.8b shape is ~530 MB of int4: killed within its first seconds, it never completes
        List<String> synth = ChildJvm.edgelm("synth", "--size", "0.8b", "--quant", "int4", "-o", out.toString());
        for (String signal : List.of("KILL", "TERM", "INT")) {
            Files.writeString(out, "old");
            killAfter(synth, log, 1000 + random.nextInt(10_000), signal); // before and during the write
            // the old file, or (a kill after the rename) the complete new one, never a part of it
            byte[] now = Files.readAllBytes(out);
            if (!java.util.Arrays.equals("old".getBytes(java.nio.charset.StandardCharsets.UTF_8), now)) {
                CliRunner r = CliRunner.run("inspect", out.toString());
                assertEquals(0, r.exitCode(), "SIG" + signal + " (seed " + SEED + "): " + r.err());
            }
            onlyNamedTemporaries(dir, List.of("synth.gguf", "log.txt"));
            AtomicFiles.removeStaleTemporaries(out); // what the next write does first
            assertNoTemporaries(dir);
        }
    }

    @Test
    void aDownloadKilledAnywhereNeverLeavesATruncatedFileInTheSnapshot() throws Exception {
        Random random = new Random(SEED + 2);
        Path cache = dir.resolve("cache");
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            List<String> run = ChildJvm.edgelm("run", "test/tiny-chat", "--prompt", "Hi", "--max-tokens", "1", "--threads", "1");
            ProcessBuilder pb = new ProcessBuilder(run);
            Path snapshot = cache.resolve("hub/models--test--tiny-chat/snapshots/" + FakeHub.COMMIT);
            for (String signal : List.of("KILL", "TERM", "KILL")) {
                long delay = 200 + random.nextInt(2500);
                Process p = withHub(pb, hub, cache).start();
                if (!p.waitFor(delay, TimeUnit.MILLISECONDS)) {
                    new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
                }
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
                }
                checkSnapshot(snapshot, signal, delay);
            }
            Process p = withHub(pb, hub, cache).start();
            assertTrue(p.waitFor(300, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), Files.readString(dir.resolve("log.txt")));
            checkSnapshot(snapshot, "none", 0);
            // converted once, the downloaded weights are dropped (no --keep-checkpoint)
            assertFalse(Files.exists(snapshot.resolve("model.safetensors")));
            assertTrue(Files.isRegularFile(snapshot.resolve("edgelm-int8.gguf")));
            assertNoTemporaries(snapshot);
        }
    }

    private ProcessBuilder withHub(ProcessBuilder pb, FakeHub hub, Path cache) {
        pb.environment().put("HF_ENDPOINT", hub.endpoint().toString());
        pb.environment().put("EDGELM_CACHE", cache.toString());
        return pb.redirectErrorStream(true).redirectOutput(dir.resolve("log.txt").toFile());
    }

    /** Every final file of the snapshot is whole: the served bytes (the converted GGUF: loadable). */
    private static void checkSnapshot(Path snapshot, String signal, long delay) throws IOException {
        if (!Files.isDirectory(snapshot)) {
            return;
        }
        try (Stream<Path> files = Files.list(snapshot)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".part") || name.endsWith(".tmp")) {
                    continue; // resumed or removed by the next run
                }
                if (name.equals("edgelm-int8.gguf")) {
                    CliRunner r = CliRunner.run("inspect", f.toString());
                    assertEquals(0, r.exitCode(), "SIG" + signal + " after " + delay + " ms: " + r.err());
                    continue;
                }
                assertArrayEquals(Files.readAllBytes(TinyChat.DIR.resolve(name)), Files.readAllBytes(f),
                        "SIG" + signal + " after " + delay + " ms (seed " + SEED + "): " + name);
            }
        }
    }
}
