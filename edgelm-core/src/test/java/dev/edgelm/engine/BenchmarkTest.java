package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BenchmarkTest {

    @Test
    void medianMinMax() {
        Benchmark.Stat odd = Benchmark.Stat.of(new double[] {5, 1, 3});
        assertEquals(new Benchmark.Stat(3, 1, 5), odd);
        Benchmark.Stat even = Benchmark.Stat.of(new double[] {4, 1, 10, 2});
        assertEquals(new Benchmark.Stat(3, 1, 10), even);
    }

    @Test
    void syntheticPromptIsExactAndRepeatable() {
        int[] a = Benchmark.syntheticPrompt(300, 512);
        assertEquals(300, a.length);
        assertArrayEquals(a, Benchmark.syntheticPrompt(300, 512));
        assertTrue(Arrays.stream(a).allMatch(id -> id >= 0 && id < 512));
        assertTrue(Arrays.stream(a).distinct().count() > 150, "ids spread over the vocabulary");
    }

    @Test
    void runsPrefillAndDecodeOnTheTinyModel() {
        try (Engine engine = Engine.load(SessionTest.TINY_A, EngineOptions.defaults().withThreads(1).withMaxNumTokens(13))) {
            Benchmark.Report r = Benchmark.run(engine, 8, 4, 2);
            assertEquals(8, r.promptTokens());
            assertEquals(4, r.decodeTokens());
            assertTrue(r.prefillTokensPerSecond().min() > 0 && r.decodeTokensPerSecond().min() > 0);
            assertTrue(r.ttftSeconds().min() > 0);
            assertTrue(r.firstTtftSeconds() > 0);
            assertTrue(r.prefillTokensPerSecond().min() <= r.prefillTokensPerSecond().median());
            assertTrue(r.prefillTokensPerSecond().median() <= r.prefillTokensPerSecond().max());
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> Benchmark.run(engine, 8, 5, 1));
            assertTrue(e.getMessage().contains("14 needed"), e.getMessage());
        }
    }
}
