package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm eval ...} end to end on the tiny checkpoints and the mini GGUFs. */
class EvalCommandTest {
    static final String TINY = "src/test/resources/fixtures/qwen35/";
    static final String EVAL = "src/test/resources/fixtures/eval/";

    @Test
    void sweepIsCleanOnTinyAAndTinyB(@TempDir Path dir) throws Exception {
        for (String m : new String[] {"tiny-a", "tiny-b"}) {
            CliRunner r = CliRunner.run("eval", "sweep", TINY + m, "--lengths", "1-80", "--plans", "oneshot,ladder,reduced,fixed:4,random:7", "--threads", "1", "--report", dir.resolve(m).toString());
            assertEquals(0, r.exitCode(), r.out() + r.err());
            assertTrue(r.out().contains("80/80 lengths clean"), r.out());
            for (String plan : new String[] {"ladder", "reduced", "fixed:4", "random:7"}) {
                assertTrue(r.out().matches("(?s).*\\n" + plan + " +80/80 .*"), plan + "\n" + r.out());
            }
            assertTrue(Files.size(dir.resolve(m).resolve("sweep.png")) > 1000);
        }
    }

    @Test
    void multiturnIsCleanOnTinyChat(@TempDir Path dir) throws Exception {
        CliRunner r = CliRunner.run("eval", "multiturn", TINY + "tiny-chat", "--conversations", EVAL + "conversations.jsonl",
                "--threads", "1", "--report", dir.toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("6/6 turns clean"), r.out());
        assertTrue(Files.exists(dir.resolve("report.md")) && Files.exists(dir.resolve("report.json")));
        // the template's history rewriting was in play: later turns rolled back to a snapshot
        assertTrue(r.out().matches("(?s).*thinking +2 +\\d+ +\\d+ +yes.*"), r.out());
    }

    @Test
    void perplexityWritesABaseFileThatKldReadsBack(@TempDir Path dir) throws Exception {
        Path base = dir.resolve("bf16.kld");
        String mini = "src/test/resources/fixtures/gguf/mini/qwen35-mini-BF16.gguf";
        CliRunner p = CliRunner.run("eval", "perplexity", mini, "--file", EVAL + "text.txt", "--ctx", "128", "--chunks", "2",
                "--kl-divergence-base", base.toString(), "--threads", "2", "--report", dir.resolve("ppl").toString());
        assertEquals(0, p.exitCode(), p.out() + p.err());
        assertTrue(p.out().contains("[1]") && p.out().contains("Final estimate: PPL = "), p.out());
        assertTrue(Files.size(dir.resolve("ppl/perplexity.png")) > 1000);
        CliRunner k = CliRunner.run("eval", "kld", mini, "--kl-divergence-base", base.toString(), "--threads", "2",
                "--max-kld", "1e-5", "--min-same-top", "0.99", "--report", dir.resolve("kld").toString());
        assertEquals(0, k.exitCode(), k.out() + k.err());
        assertTrue(k.out().contains("====== KL divergence statistics ======"), k.out());
        assertTrue(k.out().contains("Same top p: 100.000 ± 0.000 %"), k.out());
        assertTrue(Files.size(dir.resolve("kld/kld-percentiles.png")) > 1000);
    }

    @Test
    void badInputGetsAClearError(@TempDir Path dir) throws Exception {
        Path junk = dir.resolve("junk.kld");
        Files.write(junk, "_logits_\u0080\0\0\0\0\4\0\0\1\0\0\0".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        CliRunner k = CliRunner.run("eval", "kld", TINY + "tiny-a", "--kl-divergence-base", junk.toString());
        assertEquals(1, k.exitCode());
        assertTrue(k.err().startsWith("error: " + junk + ": the header"), k.err());
        CliRunner s = CliRunner.run("eval", "sweep", TINY + "tiny-a", "--plans", "ladder,zigzag");
        assertEquals(1, s.exitCode());
        assertTrue(s.err().contains("unknown plan 'zigzag'"), s.err());
        CliRunner g = CliRunner.run("eval", "gsm8k", TINY + "tiny-chat", "--data", dir.resolve("none.jsonl").toString());
        assertEquals(1, g.exitCode());
        assertTrue(g.err().contains("--data"), g.err());
    }

    @Test
    void questionsAndGsm8kRunEndToEndOnTinyChat(@TempDir Path dir) throws Exception {
        // random weights: the answers are gibberish, so the gate fails (exit 1) with every question scored
        CliRunner q = CliRunner.run("eval", "questions", TINY + "tiny-chat", "--max-tokens", "6", "--threads", "1", "--report",
                dir.resolve("q").toString());
        assertEquals(1, q.exitCode(), q.out() + q.err());
        assertTrue(q.out().contains("/8 right") && q.out().contains("FAIL: "), q.out());
        CliRunner c = CliRunner.run("eval", "questions", TINY + "tiny-chat", "--composite", "--max-tokens", "8", "--threads", "1",
                "--min-correct", "0");
        assertEquals(0, c.exitCode(), c.out() + c.err());
        assertTrue(c.out().contains("/8 right (composite)"), c.out());
        Path results = dir.resolve("results.jsonl");
        String[] args = {"eval", "gsm8k", TINY + "tiny-chat", "--data", EVAL + "gsm8k-mini.jsonl", "--limit", "2", "--max-tokens", "6",
                "--parallel", "2", "--threads", "1", "--results", results.toString()};
        CliRunner g = CliRunner.run(args);
        assertEquals(0, g.exitCode(), g.out() + g.err());
        assertTrue(g.out().contains("strict-match") && g.out().contains("2 of 2 problems scored (0 from an earlier run)"), g.out());
        assertEquals(2, Files.readAllLines(results).size());
        // a rerun resumes: nothing left to generate
        CliRunner again = CliRunner.run(args);
        assertTrue(again.out().contains("2 of 2 problems scored (2 from an earlier run)"), again.out());
        assertEquals(2, Files.readAllLines(results).size());
    }

    @Test
    void parityOfMiniBf16AgainstLlamaCppLogitsPasses(@TempDir Path dir) {
        String mini = "src/test/resources/fixtures/gguf/mini/";
        int[] ids = dev.edgelm.format.npy.Npy.read(Path.of(mini + "prompt_ids.npy")).toIntArray();
        CliRunner r = CliRunner.run("eval", "parity", mini + "qwen35-mini-BF16.gguf", "--reference", mini + "logits-BF16.npy",
                "--tokens", TokenIds.join(ids).replace(' ', ','), "--min-top1", "1", "--min-pearson", "0.9999", "--threads", "2",
                "--report", dir.toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("all " + ids.length + " positions: top-1 1.0000"), r.out());
        // against a different quantisation the same gate fails
        CliRunner q = CliRunner.run("eval", "parity", mini + "qwen35-mini-Q2_K.gguf", "--reference", mini + "logits-BF16.npy",
                "--tokens", TokenIds.join(ids).replace(' ', ','), "--min-top1", "1", "--min-pearson", "0.9999", "--threads", "2");
        assertEquals(1, q.exitCode(), q.out() + q.err());
        assertTrue(q.out().contains("FAIL: "), q.out());
    }
}
