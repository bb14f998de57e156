package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.format.npy.Npy;
import dev.edgelm.util.AtomicFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code -o} of convert, synth and score: never the input, never a link or special file replaced by a regular file. */
@Timeout(120)
class OutputPathsCliTest {
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");

    @TempDir
    Path dir;

    /** A copy of tiny-a's config and weights in the temporary folder. */
    Path checkpoint() throws IOException {
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        for (String f : List.of("config.json", "model.safetensors")) {
            Files.copy(TINY_A.resolve(f), ckpt.resolve(f));
        }
        return ckpt;
    }

    static boolean run(String... command) throws Exception {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void convertOntoItsOwnInputIsRefusedAndTheWeightsStay() throws Exception {
        Path ckpt = checkpoint();
        byte[] weights = Files.readAllBytes(ckpt.resolve("model.safetensors"));
        for (String name : List.of("model.safetensors", "config.json")) {
            CliRunner r = CliRunner.run("convert", ckpt.toString(), "-o", ckpt.resolve(name).toString());
            assertEquals(1, r.exitCode(), r.err());
            assertTrue(r.err().startsWith("error: " + ckpt.resolve(name) + ": is an input of this command"), r.err());
        }
        // through another path to the same file: a hard link
        Path link = dir.resolve("weights.gguf");
        Files.createLink(link, ckpt.resolve("model.safetensors"));
        CliRunner r = CliRunner.run("convert", ckpt.toString(), "-o", link.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertArrayEquals(weights, Files.readAllBytes(ckpt.resolve("model.safetensors")));
    }

    @Test
    void scoreOntoTheModelFileIsRefused() throws Exception {
        Path ckpt = checkpoint();
        byte[] weights = Files.readAllBytes(ckpt.resolve("model.safetensors"));
        CliRunner r = CliRunner.run("score", ckpt.toString(), "--tokens", "1,2", "-o", ckpt.resolve("model.safetensors").toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("is an input of this command"), r.err());
        assertArrayEquals(weights, Files.readAllBytes(ckpt.resolve("model.safetensors")));
    }

    @Test
    void aSymbolicLinkIsNotReplaced() throws Exception {
        Path ckpt = checkpoint();
        Path real = Files.writeString(dir.resolve("real.gguf"), "old");
        Path link = Files.createSymbolicLink(dir.resolve("link.gguf"), real);
        for (String[] args : List.of(new String[] {"convert", ckpt.toString(), "-o", link.toString()},
                new String[] {"synth", "--size", "0.8b", "-o", link.toString()},
                new String[] {"score", ckpt.toString(), "--tokens", "1", "-o", link.toString()})) {
            CliRunner r = CliRunner.run(args);
            assertEquals(1, r.exitCode(), args[0] + ": " + r.err());
            assertTrue(r.err().contains("is a symbolic link"), r.err());
            assertTrue(Files.isSymbolicLink(link), "still a link");
            assertEquals("old", Files.readString(real));
        }
    }

    @Test
    void aFifoOrADeviceIsNotReplacedByAGguf() throws Exception {
        Path ckpt = checkpoint();
        Path fifo = dir.resolve("fifo.gguf");
        assumeTrue(run("mkfifo", fifo.toString()), "mkfifo");
        CliRunner r = CliRunner.run("convert", ckpt.toString(), "-o", fifo.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("is not a regular file (a FIFO)"), r.err());
        assertFalse(Files.isRegularFile(fifo, LinkOption.NOFOLLOW_LINKS));
        r = CliRunner.run("synth", "--size", "0.8b", "-o", fifo.toString());
        assertEquals(1, r.exitCode(), r.err());

        // a device node of our own (a second /dev/null), so that a failure cannot touch the system's
        Path device = dir.resolve("null");
        assumeTrue(run("mknod", device.toString(), "c", "1", "3"), "mknod (needs root)");
        r = CliRunner.run("convert", ckpt.toString(), "-o", device.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("is not a regular file (a character device)"), r.err());
        assertFalse(Files.isRegularFile(device, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void scoreWritesThroughAFifoAndADevice() throws Exception {
        Path ckpt = checkpoint();
        Path fifo = dir.resolve("logits.fifo");
        assumeTrue(run("mkfifo", fifo.toString()), "mkfifo");
        CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = Files.newInputStream(fifo)) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        CliRunner r = CliRunner.run("score", ckpt.toString(), "--tokens", "1,2,3", "--greedy", "2", "-o", fifo.toString(),
                "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        Path copy = dir.resolve("copy.npy");
        Files.write(copy, read.get(30, TimeUnit.SECONDS));
        assertArrayEquals(new long[] {4, 512}, Npy.read(copy).shape());
        assertFalse(Files.isRegularFile(fifo, LinkOption.NOFOLLOW_LINKS), "still a FIFO");

        Path device = dir.resolve("null");
        assumeTrue(run("mknod", device.toString(), "c", "1", "3"), "mknod (needs root)");
        r = CliRunner.run("score", ckpt.toString(), "--tokens", "1,2,3", "-o", device.toString(), "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertFalse(Files.isRegularFile(device, LinkOption.NOFOLLOW_LINKS), "still a device");
    }

    @Test
    void aTemporaryFileOfAKilledRunIsRemovedByTheNextRun() throws Exception {
        Path out = dir.resolve("logits.npy");
        // what a SIGKILLed writer leaves: a temporary file named after a process that no longer runs
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        Path stale = Files.writeString(dir.resolve(".logits.npy." + dead.pid() + "-1f2e3d.tmp"), "partial");
        Path live = Files.writeString(dir.resolve(".logits.npy." + ProcessHandle.current().pid() + "-abc.tmp"), "in progress");
        CliRunner r = CliRunner.run("score", TINY_A.toString(), "--tokens", "1,2", "-o", out.toString(), "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertFalse(Files.exists(stale), "removed: its writer is dead");
        assertTrue(Files.exists(live), "kept: its writer still runs");
        Files.delete(live);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("logits.npy"), files.map(p -> p.getFileName().toString()).toList());
        }
        assertEquals(List.of(), AtomicFiles.removeStaleTemporaries(out));
    }
}
