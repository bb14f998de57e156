package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BenchmarkCommandTest {
    private static final String TINY_A = "src/test/resources/fixtures/qwen35/tiny-a";

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    void jsonHasTheAgreedKeys() throws Exception {
        Result r = run("benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "2", "--threads", "1", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode o = new ObjectMapper().readTree(r.out());
        for (String key : new String[] {"prefill_tokens_per_second", "decode_tokens_per_second", "init_seconds",
                "ttft_seconds", "peak_rss_bytes"}) {
            assertTrue(o.get(key).isNumber() && o.get(key).asDouble() > 0, key + " in " + r.out());
        }
        assertEquals(8, o.get("prompt_tokens").asInt());
        assertEquals(4, o.get("decode_tokens").asInt());
        assertEquals(2, o.get("runs").asInt());
        assertEquals(1, o.get("threads").asInt());
        assertEquals(13, o.get("max_num_tokens").asInt());
    }

    @Test
    void textHasLiteRtLmLines() {
        Result r = run("benchmark", TINY_A, "-p", "8", "-d", "4", "--runs", "1", "--threads", "1");
        assertEquals(0, r.code(), r.err());
        for (String pattern : new String[] {"(?m)^Prefill speed: [0-9.]+ tokens/sec", "(?m)^Decode speed: [0-9.]+ tokens/sec",
                "(?m)^Init time: [0-9.]+ s$", "(?m)^Time to first token: [0-9.]+ s", "(?m)^Peak memory: [0-9.]+ MB"}) {
            assertTrue(java.util.regex.Pattern.compile(pattern).matcher(r.out()).find(), pattern + " in\n" + r.out());
        }
    }

    @Test
    void badArgumentsAreClearErrors() {
        Result r = run("benchmark", TINY_A, "-p", "8", "-d", "4", "--max-num-tokens", "10");
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("error: max number of tokens 10 is too small"), r.err());
        r = run("benchmark", TINY_A, "-d", "0");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("-d/--decode-tokens must be >= 1"), r.err());
    }
}
