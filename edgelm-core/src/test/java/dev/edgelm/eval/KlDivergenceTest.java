package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code eval kld} of the mini Q4_0 GGUF against llama.cpp's BF16 base file, beside llama.cpp's own
 * statistics (fixtures/eval/kld-*.log); and a base file written by EdgeLM, read back.
 */
class KlDivergenceTest {

    static KlDivergence.Result kld(String model, Path baseFile) {
        try (ScoringModel m = ScoringModel.open(LlamaFixtures.MINI.resolve(model), 2);
             LogitsFile.Reader base = new LogitsFile.Reader(baseFile)) {
            return KlDivergence.run(m, base, Progress.NONE, Stop.never());
        }
    }

    /**
     * PPL(base) comes from the file alone, so it must equal llama.cpp's to the printed digits; the rest depends on
     * the model under test, where EdgeLM's Q4_0 arithmetic differs from ggml's in rounding (ggml keeps the
     * attention cache in F16): agreement to about 0.1 % on the means.
     */
    static void assertMatchesLlama(String model, String log) {
        KlDivergence.Result r = kld(model, LlamaFixtures.BASE);
        assertEquals(15, r.chunks());
        assertNotNull(r.statistics());
        assertEquals(15 * 63, r.statistics().count());
        Map<String, double[]> ref = LlamaFixtures.summary(LlamaFixtures.read(log));
        Map<String, double[]> ours = EvalTables.kldSummary(r.statistics());
        assertEquals(ref.keySet(), ours.keySet());
        assertEquals(ref.get("Mean PPL(base)")[0], ours.get("Mean PPL(base)")[0], 1e-6);
        assertEquals(ref.get("Mean PPL(base)")[1], ours.get("Mean PPL(base)")[1], 1e-6);
        near(ref, ours, "Mean PPL(Q)", 3e-3, 0);
        near(ref, ours, "Cor(ln(PPL(Q)), ln(PPL(base)))", 0, 0.5);
        near(ref, ours, "Mean ln(PPL(Q)/PPL(base))", 0, 3e-3);
        near(ref, ours, "Mean PPL(Q)/PPL(base)", 0, 3e-3);
        near(ref, ours, "Mean    KLD", 1e-2, 0);
        for (String p : new String[] {"Maximum KLD", "99.0%   KLD", "95.0%   KLD", "90.0%   KLD", "Median  KLD", "10.0%   KLD",
                "5.0%   KLD", "1.0%   KLD", "Minimum KLD"}) {
            near(ref, ours, p, 5e-2, 0);
        }
        for (String p : new String[] {"99.0%   Δp", "95.0%   Δp", "90.0%   Δp", "75.0%   Δp", "Median  Δp", "25.0%   Δp",
                "10.0%   Δp", "5.0%   Δp", "1.0%   Δp"}) {
            near(ref, ours, p, 0, 0.02); // percent points
        }
        near(ref, ours, "RMS Δp", 0, 0.002);
        near(ref, ours, "Same top p", 0, 1.5); // 945 tokens: 1.5 points is 14 tokens
    }

    private static void near(Map<String, double[]> ref, Map<String, double[]> ours, String key, double rel, double abs) {
        double want = ref.get(key)[0];
        double got = ours.get(key)[0];
        assertEquals(want, got, Math.max(abs, Math.abs(want) * rel), key);
    }

    @Test
    void q4_0AgainstLlamaCppBase() {
        assertMatchesLlama("qwen35-mini-Q4_0.gguf", "kld-Q4_0-vs-BF16.log");
    }

    /**
     * EdgeLM writes a base file from the BF16 model (3 chunks) and reads it back: the layout is llama.cpp's (same
     * size and tokens as llama.cpp's file for those chunks), each stored log-probability is the model's own within
     * the encoding's step, and scoring the same model against it gives PPL(Q) = the perplexity run's, KLD ~ 0.
     */
    @Test
    void baseFileWrittenByEdgeLmReadsBack(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bf16.kld");
        Perplexity.Result ppl;
        int[] tokens;
        try (ScoringModel m = ScoringModel.open(LlamaFixtures.MINI.resolve("qwen35-mini-BF16.gguf"), 2)) {
            tokens = m.tokenizeText(Files.readString(LlamaFixtures.TEXT), "text.txt");
            LogitsFile.Header h = new LogitsFile.Header(128, m.vocabSize(), 3, Arrays.copyOf(tokens, 3 * 128));
            try (LogitsFile.Writer w = new LogitsFile.Writer(file, h)) {
                ppl = Perplexity.run(m, tokens, 128, 3, w, Progress.NONE, Stop.never());
                w.commit();
            }
        }
        long llamaChunk = (Files.size(LlamaFixtures.BASE) - 20) / 15;
        assertEquals(20 + 3 * llamaChunk, Files.size(file));
        try (LogitsFile.Reader ours = new LogitsFile.Reader(file); LogitsFile.Reader llama = new LogitsFile.Reader(LlamaFixtures.BASE)) {
            assertEquals(128, ours.header().nCtx());
            assertEquals(1024, ours.header().nVocab());
            assertEquals(3, ours.header().nChunk());
            assertArrayEquals(Arrays.copyOf(llama.header().tokens(), 3 * 128), ours.header().tokens());
            // each row against llama.cpp's row for the same position: the same distribution up to BF16 rounding
            double maxTopDiff = 0;
            for (int c = 0; c < 3; c++) {
                char[][] a = ours.nextChunk();
                char[][] b = llama.nextChunk();
                for (int k = 0; k < a.length; k++) {
                    int top = argmax(b[k]);
                    maxTopDiff = Math.max(maxTopDiff, Math.abs(LogitsFile.logProb(a[k], top) - LogitsFile.logProb(b[k], top)));
                }
            }
            assertTrue(maxTopDiff < 0.02, "top-token log-prob differs by " + maxTopDiff);
        }
        KlDivergence.Result back = kld("qwen35-mini-BF16.gguf", file);
        assertEquals(3, back.chunks());
        assertEquals(ppl.ppl(), back.statistics().pplQ().value(), 1e-9 * ppl.ppl());
        // the file's NLL of the actual next token is the model's, rounded to the uint16 step (<= 16/65535 nats)
        assertEquals(ppl.ppl(), back.statistics().pplBase().value(), ppl.ppl() * 16.0 / 65535);
        assertTrue(back.statistics().meanKld().value() < 1e-6, "KLD " + back.statistics().meanKld().value());
        assertEquals(1.0, back.statistics().sameTop().value());
    }

    private static int argmax(char[] row) {
        int best = 4;
        for (int i = 5; i < row.length; i++) {
            if (row[i] > row[best]) {
                best = i;
            }
        }
        return best - 4;
    }
}
