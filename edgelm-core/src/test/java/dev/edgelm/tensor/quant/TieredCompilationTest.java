package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every block kernel must compile at every tier. The Vector API is only fast in C2's code (tier 4); C1
 * (tiers 1-3) runs its Java fallback, one to two orders of magnitude slower. When C1 gives up on a method
 * ("COMPILE SKIPPED: out of virtual registers in LIR generator", which a long written-out kernel reaches),
 * the tiered policy may leave the method at tier 2 for good, and a model run then spends minutes in the
 * fallback. Here a child JVM ({@link KernelWorkout}, {@code -Xbatch}: each compile finishes before the
 * calling thread goes on, so the outcome depends on call counts, not on timing) calls every format's kernels
 * on this machine's vector shape, and its {@code -XX:+PrintCompilation} log must show no skipped compile of
 * EdgeLM code, and a tier-4 compile of every kernel method that ran. A second child forces the 512-bit shape
 * ({@code -Dedgelm.simd.bits=512}) so that the 16-lane kernels meet C1 too on a host without AVX-512 (there
 * only the tiers up to 3 are checked: C2 does not intrinsify a shape the CPU lacks).
 */
class TieredCompilationTest {
    /** A PrintCompilation line: time, compile id, flags, tier, Class::method. */
    private static final Pattern LINE = Pattern.compile(
            "^\\s*\\d+\\s+\\d+\\s+([%sbn!]*)\\s+(\\d)\\s+(dev\\.edgelm\\.tensor\\.quant\\.\\w+::\\w+)");
    /** The kernel methods: each format's dot products and row decoders (and the integer decode kernels, Q4Lanes, Q5_KLanes and Q6_KLanes). */
    private static final Pattern KERNEL = Pattern.compile("\\.Q\\w+(Matrix|Lanes)::(dot\\w*|decode\\w*)");

    @Test
    void everyKernelReachesC2AndNoneIsSkipped() throws Exception {
        List<String> log = workout(6000);
        assertNoSkippedCompile(log);
        Map<String, Integer> top = topTiers(log);
        for (String kernel : List.of("Q8_0Matrix::decodeRow", "Q4_KMatrix::decodeRow", "Q6_KMatrix::dot",
                "Q5_KMatrix::decodeRow", "Q2_KMatrix::dot", "Q3_KMatrix::dot", "Q4Lanes::dot")) {
            assertTrue(top.keySet().stream().anyMatch(k -> k.endsWith(kernel)), kernel + " was not compiled at all: " + top);
        }
        Map<String, Integer> sizes = bytecodeSizes(log);
        for (Map.Entry<String, Integer> e : top.entrySet()) {
            if (!KERNEL.matcher(e.getKey()).find()) {
                continue;
            }
            // A small method that C1 compiled with profiling (tier 3) and that C2 then inlined into every hot caller
            // (a width dispatcher such as Q4_0Matrix.dot, whose 8-lane body is dot8) needs no C2 code of its own:
            // it is slow only where it is the loop, and then C2 compiles it. Tier 2 (the stuck state) never passes.
            boolean inlinedDispatcher = e.getValue() == 3 && sizes.getOrDefault(e.getKey(), Integer.MAX_VALUE) <= INLINE_SIZE;
            if (!inlinedDispatcher) {
                assertEquals(4, e.getValue(), e.getKey() + " never reached tier 4 (C2); tiers seen: " + top);
            }
        }
    }

    @Test
    void the512BitKernelsCompileInC1() throws Exception {
        List<String> log = workout(400, "-Dedgelm.simd.bits=512", "-XX:TieredStopAtLevel=3");
        assertNoSkippedCompile(log);
        Map<String, Integer> top = topTiers(log);
        for (String kernel : List.of("Q4Lanes::dot", "Q5_KLanes::dot", "Q6_KLanes::dot", "Q8_0Matrix::dot16")) {
            assertTrue(top.keySet().stream().anyMatch(k -> k.endsWith(kernel)), kernel + " was not compiled: " + top);
        }
    }

    /**
     * The 8-lane (AVX2) kernels' numbers on any host: the workout checks them against the decoded rows
     * (on an AVX-512 host the normal tests exercise the 16-lane kernels instead; 256-bit vectors are
     * native there too).
     */
    @Test
    void the256BitKernelsAgreeWithTheDecodedRows() throws Exception {
        List<String> log = workout(50, "-Dedgelm.simd.bits=256");
        assertTrue(log.stream().noneMatch(l -> l.startsWith("MISMATCH")), String.join("\n", log));
    }

    private static void assertNoSkippedCompile(List<String> log) {
        for (String line : log) {
            if (line.contains("dev.edgelm") && (line.contains("COMPILE SKIPPED") || line.contains("not retryable"))) {
                throw new AssertionError("a kernel the JIT gave up on (split it, see docs/kernels.md): " + line);
            }
        }
    }

    /** HotSpot's {@code FreqInlineSize} on x86-64: C2 inlines a hot call to a method of at most this many bytecodes. */
    private static final int INLINE_SIZE = 325;
    private static final Pattern SIZE = Pattern.compile("(dev\\.edgelm\\.tensor\\.quant\\.\\w+::\\w+) \\((\\d+) bytes\\)");

    /** The bytecode size PrintCompilation gives for each method of the quant package. */
    private static Map<String, Integer> bytecodeSizes(List<String> log) {
        Map<String, Integer> sizes = new TreeMap<>();
        for (String line : log) {
            Matcher m = SIZE.matcher(line);
            if (m.find()) {
                sizes.put(m.group(1), Integer.parseInt(m.group(2)));
            }
        }
        return sizes;
    }

    /** The highest tier each EdgeLM method of the quant package was compiled at (standard entries only, not OSR). */
    private static Map<String, Integer> topTiers(List<String> log) {
        Map<String, Integer> top = new TreeMap<>();
        for (String line : log) {
            Matcher m = LINE.matcher(line);
            if (m.find() && !m.group(1).contains("%") && !line.contains("made not entrant")) {
                top.merge(m.group(3), Integer.parseInt(m.group(2)), Math::max);
            }
        }
        return top;
    }

    private static List<String> workout(int calls, String... flags) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-XX:+PrintCompilation", "-Xbatch"));
        cmd.addAll(List.of(flags));
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        cmd.addAll(List.of("-cp", cp, KernelWorkout.class.getName(), Integer.toString(calls)));
        // the output goes to a file, so that a child that hangs is stopped by the timeout (reading its pipe to the end
        // would wait for it forever)
        Path log = Files.createTempFile("edgelm-workout-", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("the workout process ran past 10 minutes:\n" + Files.readString(log, StandardCharsets.UTF_8));
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), "the workout process failed:\n" + out);
            assertTrue(out.contains("done"), out);
            return out.lines().toList();
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
