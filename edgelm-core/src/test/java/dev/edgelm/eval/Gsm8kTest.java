package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GSM8K scoring on hand-written replies, against lm-evaluation-harness's filters and exact_match as its task file defines them. */
class Gsm8kTest {
    static final Gsm8k.Problem SARA = new Gsm8k.Problem(2, "Sara earns...", "2 * 1,250 = 2,500 dollars.\n#### 2,500");

    @Test
    void strictTakesTheFirstMarkedAnswer() {
        assertEquals("2,500", Gsm8k.strict("so 2 * 1250 = 2500.\n#### 2,500\n#### 3"));
        assertEquals(Gsm8k.INVALID, Gsm8k.strict("The answer is 2500."));
        assertEquals("-4", Gsm8k.strict("#### -4"));
    }

    @Test
    void flexibleTakesTheLastNumber() {
        assertEquals("2500.", Gsm8k.flexible("2 * 1250 = 2500."));
        assertEquals("$2,500", Gsm8k.flexible("She earns $2,500"));
        assertEquals("7", Gsm8k.flexible("3 and 4 make 7"));
        assertEquals(Gsm8k.INVALID, Gsm8k.flexible("no digits here"));
    }

    @Test
    void exactMatchIgnoresCommasDollarsTheMarkerAndATrailingDot() {
        assertEquals("2500", Gsm8k.normalise(SARA.target()));
        Gsm8k.Record r = Gsm8k.score(SARA, "2 weeks at $1,250 is $2,500.");
        assertEquals(Gsm8k.INVALID, r.strict());
        assertFalse(r.strictCorrect());
        assertTrue(r.flexibleCorrect()); // "$2,500." -> "2500"
        Gsm8k.Record s = Gsm8k.score(SARA, "1,250 + 1,250 = 2,500\n#### 2500");
        assertTrue(s.strictCorrect() && s.flexibleCorrect());
        Gsm8k.Record w = Gsm8k.score(SARA, "#### 2,500 dollars, or 3 weeks 3750");
        assertTrue(w.strictCorrect());
        assertFalse(w.flexibleCorrect());
    }

    @Test
    void wilsonIntervalMatchesTheFormula() {
        // 7 of 10: p = 0.7, z = 1.96 -> [0.3968, 0.8922] (hand-computed)
        Gsm8k.Interval i = Gsm8k.wilson(7, 10);
        assertEquals(0.3968, i.low(), 1e-4);
        assertEquals(0.8922, i.high(), 1e-4);
        Gsm8k.Interval zero = Gsm8k.wilson(0, 20);
        assertEquals(0.0, zero.low(), 1e-12);
        assertEquals(0.1611, zero.high(), 1e-4);
    }

    @Test
    void resultsFileResumesAndDropsACutLastLine(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("r.jsonl");
        Gsm8k.Record a = Gsm8k.score(new Gsm8k.Problem(0, "q0", "#### 7"), "#### 7");
        Gsm8k.Record b = Gsm8k.score(new Gsm8k.Problem(1, "q1", "#### 60"), "50");
        String line = Jsonl.JSON.writeValueAsString(b);
        Files.writeString(f, Jsonl.JSON.writeValueAsString(a) + "\n" + line.substring(0, line.length() / 2), StandardCharsets.UTF_8);
        Map<Integer, Gsm8k.Record> done = Gsm8k.readResults(f);
        assertEquals(List.of(0), List.copyOf(done.keySet()));
        assertTrue(done.get(0).strictCorrect());
        Files.writeString(f, "not json\n" + line + "\n", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
        dev.edgelm.util.EdgeLmException e = org.junit.jupiter.api.Assertions.assertThrows(dev.edgelm.util.EdgeLmException.class,
                () -> Gsm8k.readResults(f));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    }

    /** A stop request (what Ctrl+C sends) after the first problem keeps it; the rerun does only the rest. */
    @Test
    void stoppedRunKeepsWhatFinishedAndResumes(@TempDir Path dir) throws Exception {
        Path model = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
        List<Gsm8k.Problem> problems = Gsm8k.read(LlamaFixtures.DIR.resolve("gsm8k-mini.jsonl"), -1);
        Path results = dir.resolve("r.jsonl");
        try (dev.edgelm.engine.Engine engine = dev.edgelm.engine.Engine.load(model,
                dev.edgelm.engine.EngineOptions.defaults().withThreads(1))) {
            dev.edgelm.template.ChatFormat format = dev.edgelm.template.ChatFormat.load(model);
            Stop stop = new Stop();
            Gsm8k.Result first = Gsm8k.run(engine, format, problems, results, 1, 4, (done, total, label) -> {
                if (done == 1) {
                    stop.request();
                }
            }, stop);
            assertFalse(first.complete());
            assertEquals(1, first.n());
            assertEquals(1, Files.readAllLines(results).size());
            Gsm8k.Result second = Gsm8k.run(engine, format, problems, results, 1, 4, Progress.NONE, Stop.never());
            assertTrue(second.complete());
            assertEquals(1, second.resumed());
            assertEquals(3, second.n());
            assertEquals(first.records().get(0), second.records().get(0));
            // the same problem asked again gives the same record: greedy and deterministic
            assertEquals(Gsm8k.solve(engine, format, problems.get(2), 4), second.records().get(2));
        }
    }
}
