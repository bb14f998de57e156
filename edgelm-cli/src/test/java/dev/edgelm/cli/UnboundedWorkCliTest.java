package dev.edgelm.cli;

import static dev.edgelm.cli.HostileModelCliTest.assertClearError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.format.npy.Npy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Options that ask for unbounded work or overflow: a clear error, or the work done in bounded memory. */
@Timeout(300)
class UnboundedWorkCliTest {
    static final String MODEL = TinyChat.DIR.toString();

    @TempDir
    Path dir;

    @Test
    void scoreStreamsLongGreedyRunsToTheFileInBoundedMemory() throws Exception {
        // 1200 greedy rows of tiny-chat's 8320 logits are 40 MB: more than the child's whole 32 MB heap
        Path out = dir.resolve("greedy.npy");
        Path log = dir.resolve("log.txt");
        Process p = new ProcessBuilder(ChildJvm.edgelmWithHeap("32m", "score", MODEL, "--tokens", "1,2,3",
                "--greedy", "1200", "-o", out.toString(), "--threads", "1"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(p.waitFor(240, TimeUnit.SECONDS), "finishes");
        assertEquals(0, p.exitValue(), Files.readString(log));
        // the header announces the rows written: prompt rows + greedy rows but the last
        Npy.Array a = Npy.read(out);
        assertArrayEquals(new long[] {3 + 1200 - 1, 8320}, a.shape());
        assertTrue(Files.readString(log).contains("greedy: "), Files.readString(log));
    }

    @Test
    void hugeCountsAreRefusedWithoutOverflow() {
        Path out = dir.resolve("x.npy");
        assertClearError(CliRunner.run("benchmark", MODEL, "-p", "2147483647", "-d", "1", "--runs", "1"),
                "2147483647 prompt + 1 decode tokens need 2147483649 positions, more than the 16777216");
        assertClearError(CliRunner.run("score", MODEL, "--tokens", "1,2", "--greedy", "2147483647", "-o", out.toString()),
                "--greedy (2147483647) make 2147483649 positions");
        assertClearError(CliRunner.run("score", MODEL, "--tokens", "1,2,3", "--chunks", "2147483647,2147483647,3", "-o",
                out.toString()), "add up to 4294967297 but there are 3 tokens");
        assertTrue(!Files.exists(out));
    }

    @Test
    void conflictingOptionsAreRejected() {
        assertClearError(CliRunner.run("score", MODEL, "--tokens", "1,2", "--chunk-size", "1", "--chunks", "1,1", "-o",
                dir.resolve("x.npy").toString()), "--chunk-size and --chunks exclude each other");
    }

    @Test
    void aZeroContextAndAbsurdThreadCountsAreClearErrors() {
        assertClearError(CliRunner.run("run", MODEL, "--prompt", "Hi", "--max-num-tokens", "0"),
                "--max-num-tokens must be between 1 and 16777216 tokens, got 0");
        assertClearError(CliRunner.run("benchmark", MODEL, "-p", "4", "-d", "4", "--max-num-tokens", "0"),
                "--max-num-tokens must be between 1 and 16777216 tokens, got 0");
        String max = Integer.toString(EngineOptions.maxThreads());
        for (String[] args : new String[][] {{"run", MODEL, "--prompt", "Hi"}, {"benchmark", MODEL, "-p", "4", "-d", "4"},
                {"score", MODEL, "--tokens", "1", "-o", dir.resolve("x.npy").toString()}}) {
            String[] withThreads = java.util.Arrays.copyOf(args, args.length + 2);
            withThreads[args.length] = "--threads";
            withThreads[args.length + 1] = "1000";
            assertClearError(CliRunner.run(withThreads), "--threads must be between 1 and " + max, "got 1000");
        }
    }
}
