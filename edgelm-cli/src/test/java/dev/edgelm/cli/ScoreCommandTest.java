package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.format.npy.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScoreCommandTest {
    @TempDir
    Path dir;

    private static String ids(String fixture, String file) {
        return Arrays.stream(Fixtures.npy("qwen35/" + fixture + "/golden/" + file).toIntArray())
                .mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    @Test
    void chunkedScoreWithGreedyMatchesTheGoldens() {
        Path out = dir.resolve("logits.npy");
        CliRunner r = CliRunner.run("score", Fixtures.path("qwen35/tiny-b").toString(), "--tokens", ids("tiny-b", "prompt_ids.npy"),
                "--chunks", "17,13,11", "--greedy", "24", "-o", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        String expectedGreedy = "greedy: " + ids("tiny-b", "greedy_ids.npy").replace(',', ' ');
        assertEquals(expectedGreedy, r.out().trim());
        Npy.Array logits = Npy.read(out);
        assertArrayEquals(new long[] {41 + 23, 512}, logits.shape());
        Npy.Array chunked = Fixtures.npy("qwen35/tiny-b/golden/logits_chunked.npy");
        Npy.Array steps = Fixtures.npy("qwen35/tiny-b/golden/greedy_step_logits.npy");
        assertTrue(Fixtures.maxAbsDiff(chunked.floats(), logits.floats(), 0) <= 1e-3f);
        // rows 40.. are the logits that chose each greedy id: the golden step logits
        float[] stepRows = Arrays.copyOfRange(steps.floats(), 0, 24 * 512);
        assertTrue(Fixtures.maxAbsDiff(stepRows, logits.floats(), 40 * 512) <= 1e-3f);
    }

    @Test
    void tokensFromAFileWithWhiteSpace() throws IOException {
        Path tokens = dir.resolve("ids.txt");
        Files.writeString(tokens, ids("tiny-a", "long_prompt_ids.npy").replace(",", " \n") + "\n");
        Path out = dir.resolve("long.npy");
        CliRunner r = CliRunner.run("score", Fixtures.path("qwen35/tiny-a").toString(), "--tokens", "@" + tokens,
                "--chunk-size", "64", "--output", out.toString(), "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        float diff = Fixtures.maxAbsDiff(Fixtures.npy("qwen35/tiny-a/golden/long_logits_full.npy").floats(), Npy.read(out).floats(), 0);
        assertTrue(diff <= 1e-3f, "max abs diff " + diff);
    }

    @Test
    void userMistakesAreOneClearLineAndNoOutputFile() {
        Path out = dir.resolve("x.npy");
        String model = Fixtures.path("qwen35/tiny-a").toString();
        CliRunner r = CliRunner.run("score", model, "--tokens", "1,two,3", "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertEquals("error: --tokens: 'two' is not a token id", r.err().trim());

        r = CliRunner.run("score", model, "--tokens", "1,2,3", "--chunks", "1,1", "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("add up to 2 but there are 3 tokens"), r.err());

        r = CliRunner.run("score", model, "--tokens", "1,2,9999", "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("token id 9999 is outside the vocabulary [0, 512)"), r.err());

        r = CliRunner.run("score", dir.resolve("nope").toString(), "--tokens", "1", "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("no such file or folder"), r.err());

        r = CliRunner.run("score", model, "--tokens", "@" + dir.resolve("missing.txt"), "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("cannot read"), r.err());

        r = CliRunner.run("score", model, "-o", out.toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("--tokens"), r.err());

        assertFalse(r.err().contains("Exception"), r.err());
        assertFalse(Files.exists(out));
    }

    @Test
    void helpListsTheCommands() {
        CliRunner r = CliRunner.run("--help");
        assertEquals(0, r.exitCode());
        assertTrue(r.out().contains("score"), r.out());
        r = CliRunner.run("score", "--help");
        assertEquals(0, r.exitCode());
        assertTrue(r.out().contains("--chunk-size") && r.out().contains("--greedy"), r.out());
    }
}
