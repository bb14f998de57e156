package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** {@code edgelm benchmark --parallel}: shape of the output and the identity check (scheduler and lockstep), on tiny-a (speeds not asserted). */
class BatchBenchmarkCommandTest {
    private static final String TINY_A = "src/test/resources/fixtures/qwen35/tiny-a";

    @Test
    void jsonHasOneEntryPerParallelValueAndIdenticalSequences() throws Exception {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "-p", "8", "-d", "5", "--runs", "2", "--threads", "2",
                "--parallel", "1,3", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        assertEquals(0, o.get("mismatched_sequences").asInt(), "each sequence computed as if alone, whatever N");
        assertEquals(2, o.get("runs").asInt());
        assertTrue(o.get("session_decode_tokens_per_second").asDouble() > 0);
        JsonNode rows = o.get("parallel");
        assertEquals(2, rows.size());
        assertEquals(1, rows.get(0).get("sequences").asInt());
        assertEquals(3, rows.get(1).get("sequences").asInt());
        for (JsonNode row : rows) {
            for (String key : new String[] {"aggregate_decode_tokens_per_second", "aggregate_prefill_tokens_per_second",
                    "throughput_tokens_per_second", "sequence_decode_tokens_per_second", "ttft_seconds",
                    "lockstep_decode_tokens_per_second"}) {
                assertTrue(row.get(key).asDouble() > 0, key + " in " + row);
                assertTrue(row.get(key + "_min").asDouble() <= row.get(key + "_max").asDouble(), key);
            }
        }
    }

    @Test
    void textPrintsATableAndBadValuesAreUserErrors() {
        CliRunner r = CliRunner.run("benchmark", TINY_A, "-p", "4", "-d", "3", "--runs", "1", "--threads", "1", "--parallel", "2");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("aggregate decode tok/s"), r.out());
        assertTrue(r.out().contains("lockstep decode tok/s"), r.out());
        assertTrue(r.out().contains("Every sequence produced the same tokens whatever N, in the scheduler and in lockstep (sequence 0: those of the single-stream run)."), r.out());
        CliRunner bad = CliRunner.run("benchmark", TINY_A, "-p", "4", "-d", "3", "--parallel", "0");
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("--parallel"), bad.err());
    }
}
