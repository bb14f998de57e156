package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.hub.FakeHub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk and a read-only folder, for real: the command runs in a child JVM inside a private mount namespace
 * where the output folder is a small tmpfs (Linux {@code unshare}; skipped where user namespaces are not allowed).
 * It must fail with one clear line, leave the file that was there, and leave no temporary file.
 */
@Timeout(300)
class DiskFaultsTest {
    @TempDir
    static Path shared;
    static boolean namespaces;

    @BeforeAll
    static void probe() throws Exception {
        Path d = Files.createDirectories(shared.resolve("probe"));
        namespaces = sh(List.of("unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                "mount -t tmpfs -o size=64k tmpfs \"$0\"", d.toString()), 30).exit == 0;
    }

    record Result(int exit, String out) {}

    static Result sh(List<String> command, int seconds) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            return new Result(-1, e.getMessage());
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(seconds, TimeUnit.SECONDS));
        return new Result(p.exitValue(), out);
    }

    /**
     * Mounts a tmpfs of {@code size} on {@code folder} (read-only after writing {@code old} into {@code file} when
     * asked), runs the CLI there with {@code env}, and reports its output, exit code, the folder's files and
     * {@code file}'s content.
     */
    static Result inTmpfs(Path folder, String size, boolean readOnly, String file, List<String> env, String... args)
            throws Exception {
        String java = ChildJvm.edgelm(args).stream().map(DiskFaultsTest::quote).collect(Collectors.joining(" "));
        String script = "set -e; mount -t tmpfs -o size=" + size + " tmpfs " + quote(folder.toString()) + "; "
                + "printf old > " + quote(folder.resolve(file).toString()) + "; "
                + (readOnly ? "mount -o remount,ro " + quote(folder.toString()) + "; " : "")
                + "set +e; " + String.join(" ", env) + " " + java + " 2>&1; echo \"exit=$?\"; "
                + "echo \"files=$(ls -A " + quote(folder.toString()) + " | tr '\\n' ' ')\"; "
                + "echo \"content=$(cat " + quote(folder.resolve(file).toString()) + ")\"";
        List<String> cmd = new ArrayList<>(List.of("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script));
        return sh(cmd, 240);
    }

    static void assertCleanFailure(Result r, String file, String... fragments) {
        String out = r.out();
        assertTrue(out.contains("exit=1"), out);
        assertTrue(out.contains("\nerror: ") || out.startsWith("error: "), out);
        assertFalse(out.contains("\tat ") || out.contains("Exception"), "no stack trace: " + out);
        assertTrue(out.contains("content=old"), "the old " + file + " stays: " + out);
        assertTrue(out.contains("files=" + file + " \n") || out.contains("files=" + file + " "), "nothing else: " + out);
        assertFalse(out.contains(".tmp "), "no temporary file left: " + out);
        for (String f : fragments) {
            assertTrue(out.contains(f), "'" + f + "' in: " + out);
        }
    }

    @Test
    void convertOnAFullDisk() throws Exception {
        assumeTrue(namespaces, "unshare with a user and mount namespace");
        Path d = Files.createDirectories(shared.resolve("convert-full"));
        Result r = inTmpfs(d, "1m", false, "model.gguf", List.of(),
                "convert", TinyChat.DIR.toAbsolutePath().toString(), "-o", d.resolve("model.gguf").toString());
        assertCleanFailure(r, "model.gguf", "No space left on device");
    }

    @Test
    void convertIntoAReadOnlyFolder() throws Exception {
        assumeTrue(namespaces, "unshare with a user and mount namespace");
        Path d = Files.createDirectories(shared.resolve("convert-ro"));
        Result r = inTmpfs(d, "1m", true, "model.gguf", List.of(),
                "convert", TinyChat.DIR.toAbsolutePath().toString(), "-o", d.resolve("model.gguf").toString());
        assertCleanFailure(r, "model.gguf", "error: " + d.resolve("model.gguf") + ": cannot create a file in " + d
                + ": Read-only file system");
    }

    @Test
    void scoreOnAFullDisk() throws Exception {
        assumeTrue(namespaces, "unshare with a user and mount namespace");
        Path d = Files.createDirectories(shared.resolve("score-full"));
        String tokens = java.util.stream.IntStream.range(1, 60).mapToObj(Integer::toString).collect(Collectors.joining(","));
        Result r = inTmpfs(d, "256k", false, "logits.npy", List.of(),
                "score", TinyChat.DIR.toAbsolutePath().toString(), "--tokens", tokens, "-o", d.resolve("logits.npy").toString(),
                "--threads", "1");
        assertCleanFailure(r, "logits.npy", "No space left on device");
    }

    @Test
    void synthOnAFullDisk() throws Exception {
        assumeTrue(namespaces, "unshare with a user and mount namespace");
        Path d = Files.createDirectories(shared.resolve("synth-full"));
        Result r = inTmpfs(d, "2m", false, "synth.gguf", List.of(),
                "synth", "--size", "0.8b", "--quant", "int4", "-o", d.resolve("synth.gguf").toString());
        assertCleanFailure(r, "synth.gguf", "error: " + d.resolve("synth.gguf") + ": cannot write: No space left on device");
    }

    @Test
    void aDownloadOnAFullDisk() throws Exception {
        assumeTrue(namespaces, "unshare with a user and mount namespace");
        Path d = Files.createDirectories(shared.resolve("cache-full"));
        try (FakeHub hub = FakeHub.serving("test/tiny-chat", TinyChat.DIR)) {
            Result r = inTmpfs(d, "1m", false, "keep.txt",
                    List.of("HF_ENDPOINT=" + hub.endpoint(), "EDGELM_CACHE=" + quote(d.toString())),
                    "run", "test/tiny-chat", "--prompt", "Hi", "--max-tokens", "1", "--threads", "1");
            String out = r.out();
            assertTrue(out.contains("exit=1"), out);
            assertTrue(out.contains("No space left on device") && out.contains("error: "), out);
            assertFalse(out.contains("\tat "), out);
            assertTrue(out.contains("content=old"), out);
        }
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
