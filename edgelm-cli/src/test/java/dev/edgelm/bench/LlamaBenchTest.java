package dev.edgelm.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Parsing of a recorded {@code llama-bench -t 2 -p 32 -n 8 -r 2 -o json} run (llama.cpp at commit 34af94cd, a
 * synthetic 0.8B Q8_0 file, a heavily loaded machine: the figures are tiny, the format is what matters; the model path shortened to its file name). The
 * expected values are read off the file by hand.
 */
class LlamaBenchTest {
    private static final Path RECORDED = Path.of("src/test/resources/fixtures/llama-bench/pp32-tg8-0.8b-q8_0.json");

    @Test
    void parsesTheRecordedOutput() throws Exception {
        LlamaBench.Result r = LlamaBench.parse(Files.readString(RECORDED));
        assertEquals(32, r.promptTokens());
        assertEquals(8, r.genTokens());
        assertEquals(2, r.threads());
        assertEquals(1.122078, r.prefillTokensPerSecond(), 0);
        assertArrayEquals(new double[] {1.0977, 1.14645}, r.prefillSamples(), 0);
        assertEquals(0.074729, r.decodeTokensPerSecond(), 0);
        assertArrayEquals(new double[] {0.0813638, 0.0680941}, r.decodeSamples(), 0);
        assertEquals("unknown", r.buildCommit());
        assertEquals("qwen35 0.8B Q8_0", r.modelType());
        assertEquals((1.0977 + 1.14645) / 2, LlamaBench.median(r.prefillSamples(), -1), 1e-12);
        assertEquals(7.5, LlamaBench.median(new double[0], 7.5));
        assertEquals(2.0, LlamaBench.median(new double[] {3, 1, 2}, 0));
    }

    @Test
    void commandLineMatchesTheProtocol() {
        assertEquals(List.of("/opt/llama-bench", "-m", "m.gguf", "-t", "2", "-p", "256", "-n", "64", "-r", "3", "-o", "json"),
                LlamaBench.command(Path.of("/opt/llama-bench"), Path.of("m.gguf"), 2, 256, 64, 3));
    }

    @Test
    void badOutputIsAClearError() throws Exception {
        String recorded = Files.readString(RECORDED);
        assertTrue(assertThrows(EdgeLmException.class, () -> LlamaBench.parse("| model | size |"))
                .getMessage().contains("not JSON"));
        assertTrue(assertThrows(EdgeLmException.class, () -> LlamaBench.parse("{\"n_prompt\": 1}"))
                .getMessage().contains("not a JSON array"));
        // only the prompt test: the generation test is missing
        String promptOnly = recorded.substring(0, recorded.indexOf("  },") + 3) + "\n]";
        assertTrue(assertThrows(EdgeLmException.class, () -> LlamaBench.parse(promptOnly))
                .getMessage().contains("lacks a generation"), promptOnly);
        String twoPrompts = recorded.replace("\"n_prompt\": 0,", "\"n_prompt\": 32,").replace("\"n_gen\": 8,", "\"n_gen\": 0,");
        assertTrue(assertThrows(EdgeLmException.class, () -> LlamaBench.parse(twoPrompts))
                .getMessage().contains("more than one prompt test"));
        String noRate = recorded.replace("\"avg_ts\": 1.122078,", "");
        assertTrue(assertThrows(EdgeLmException.class, () -> LlamaBench.parse(noRate))
                .getMessage().contains("'avg_ts'"));
    }

    @Test
    void aMissingExecutableIsNamed() {
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> LlamaBench.check(Path.of("no/such/llama-bench")));
        assertTrue(e.getMessage().contains("no/such/llama-bench") && e.getMessage().contains("--compare-llama-bench"), e.getMessage());
    }
}
