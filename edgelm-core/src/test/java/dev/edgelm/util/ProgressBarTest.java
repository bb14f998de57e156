package dev.edgelm.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The progress bar on a non-terminal (plain lines) and on a terminal (one line redrawn, fitted to the width). */
class ProgressBarTest {
    static final long MIB = 1024 * 1024;

    /** A clock the test moves: nanoseconds. */
    static final class Clock {
        long now;
    }

    @Test
    void aNonTerminalGetsAFewPlainLinesWithTotalsRateAndTimeLeft() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Clock clock = new Clock();
        ProgressBar bar = new ProgressBar(new PrintStream(bytes, true, StandardCharsets.UTF_8), "model.safetensors",
                100 * MIB, 0, null, false, 80, () -> clock.now);
        for (int i = 1; i <= 100; i++) {
            clock.now += 10_000_000L; // 1 MiB every 10 ms: 100 MiB/s
            bar.advance(MIB);
        }
        bar.close();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(!text.contains("\r"), "no redraws on a non-terminal");
        assertEquals(List.of(
                "model.safetensors:  25% (25.0 MiB of 100 MiB, 100 MiB/s, 0.8 s left)",
                "model.safetensors:  50% (50.0 MiB of 100 MiB, 100 MiB/s, 0.5 s left)",
                "model.safetensors:  75% (75.0 MiB of 100 MiB, 100 MiB/s, 0.3 s left)",
                "model.safetensors: done, 100 MiB in 1.0 s, 100 MiB/s"), text.lines().toList());
    }

    @Test
    void aTerminalGetsOneLineRedrawnAtMostTenTimesASecondWithinItsWidth() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Clock clock = new Clock();
        int width = 60;
        ProgressBar bar = new ProgressBar(new PrintStream(bytes, true, StandardCharsets.UTF_8), "a-rather-long-file-name.safetensors",
                2048 * MIB, 1024 * MIB, null, true, width, () -> clock.now);
        for (int i = 0; i < 100; i++) {
            clock.now += 20_000_000L; // 10.24 MiB every 20 ms: 512 MiB/s; 2 s in all
            bar.advance(i < 99 ? 1024 * MIB / 100 : 1024 * MIB - 99 * (1024 * MIB / 100));
        }
        bar.close();
        String text = bytes.toString(StandardCharsets.UTF_8);
        String[] draws = text.split("\r", -1);
        // the first draw at the start, one every 100 ms (5 steps of 20 ms) during the 2 s, and the last one
        assertTrue(draws.length - 1 >= 20 && draws.length - 1 <= 23, draws.length - 1 + " draws");
        for (String d : draws) {
            assertTrue(d.strip().length() < width, "fits in " + width + " columns: '" + d + "'");
        }
        String last = draws[draws.length - 1];
        assertTrue(last.endsWith("\n"), "the line is ended");
        assertTrue(last.contains("100% 2.0 GiB of 2.0 GiB, 512 MiB/s"), "the rate leaves out the resumed part: " + last);
        assertTrue(draws[draws.length / 2].contains(" left"), "time left while running: " + draws[draws.length / 2]);
    }

    @Test
    void unitsAreBinaryAndNamedSo() {
        assertEquals("512 B", Bytes.format(512));
        assertEquals("1.5 KiB", Bytes.format(1536));
        assertEquals("769 MiB", Bytes.format(769 * MIB));
        assertEquals("1.8 GiB", Bytes.format((long) (1.8 * 1024 * MIB)));
        assertEquals("0:15", ProgressBar.duration(15));
        assertEquals("1:02:05", ProgressBar.duration(3725));
    }
}
