package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** EdgeLM's perplexity of the mini BF16 GGUF against llama-perplexity's printed figures (fixtures/eval/ppl-BF16.log). */
class PerplexityTest {

    @Test
    void tokensAndPerplexityMatchLlamaCpp() throws Exception {
        String log = LlamaFixtures.read("ppl-BF16.log");
        try (ScoringModel m = ScoringModel.open(LlamaFixtures.MINI.resolve("qwen35-mini-BF16.gguf"), 2);
             LogitsFile.Reader base = new LogitsFile.Reader(LlamaFixtures.BASE)) {
            int[] tokens = m.tokenizeText(Files.readString(LlamaFixtures.TEXT), "text.txt");
            // the chunks llama.cpp evaluated are stored in its base file
            int[] evaluated = base.header().tokens();
            assertArrayEquals(evaluated, java.util.Arrays.copyOf(tokens, evaluated.length));
            Perplexity.Result r = Perplexity.run(m, tokens, 128, -1, null, Progress.NONE, Stop.never());
            List<Double> running = LlamaFixtures.runningPpl(log);
            assertEquals(15, r.chunks());
            assertEquals(running.size(), r.chunks());
            double[] fin = LlamaFixtures.finalEstimate(log);
            System.out.printf("PPL %.4f +/- %.5f (llama.cpp %.4f +/- %.5f)%n", r.ppl(), r.uncertainty(), fin[0], fin[1]);
            for (int c = 0; c < r.chunks(); c++) {
                assertEquals(running.get(c), r.runningPpl()[c], running.get(c) * 1.5e-3, "chunk " + (c + 1));
            }
            assertEquals(fin[0], r.ppl(), fin[0] * 2e-4);
            assertEquals(fin[1], r.uncertainty(), fin[1] * 1e-3);
        }
    }
}
