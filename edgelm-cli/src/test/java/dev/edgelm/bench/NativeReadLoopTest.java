package dev.edgelm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeReadLoopTest {
    @TempDir
    Path cache;

    @Test
    void parsesTheToolsLine() throws Exception {
        NativeReadLoop.Result r = NativeReadLoop.parse(
                "readbw threads=2 bytes=1073741824 passes=10 best_gbps=71.70 median_gbps=69.02 isa=avx512 sink=3\n");
        assertEquals(71.70e9, r.bytesPerSecond(), 1);
        assertEquals("avx512", r.isa());
        assertTrue(r.available());
        assertThrows(NativeReadLoop.Unavailable.class, () -> NativeReadLoop.parse("readbw: cannot map 4096 MiB"));
    }

    @Test
    void withoutACompilerItSaysSoInsteadOfAFigure() {
        NativeReadLoop.Result r = NativeReadLoop.measure(Map.of("PATH", cache.toString()), cache, 1, 16, 1);
        assertFalse(r.available());
        assertTrue(Double.isNaN(r.bytesPerSecond()));
        assertEquals("no C compiler ('cc') on the PATH", r.unavailable());
    }

    @Test
    void buildsOnceAndMeasuresWhereACompilerExists() throws Exception {
        String path = System.getenv("PATH");
        assumeTrue(NativeReadLoop.findOnPath("cc", path) != null, "no cc on the PATH");
        Map<String, String> env = Map.of("PATH", path);
        NativeReadLoop.Result r = NativeReadLoop.measure(env, cache, 2, 16, 2);
        assertTrue(r.available(), r.unavailable());
        assertTrue(r.bytesPerSecond() > 0);
        assertTrue(r.isa().matches("avx512|avx2|sse2"), r.isa());
        Path binary = NativeReadLoop.build(env, cache);
        assertTrue(binary.startsWith(cache.resolve("tools")) && binary.getFileName().toString().matches("readbw-[0-9a-f]{12}"),
                binary.toString());
        assertEquals(binary, NativeReadLoop.build(env, cache), "built once, then reused");
        // the tool rejects bad arguments with its own message and a non-zero status
        NativeReadLoop.Unavailable e = assertThrows(NativeReadLoop.Unavailable.class,
                () -> NativeReadLoop.run(java.util.List.of(binary.toString(), "0"), 60));
        assertTrue(e.getMessage().contains("THREADS must be an integer"), e.getMessage());
    }
}
