package dev.edgelm.tensor;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReadBandwidthTest {
    @Test
    void plainLoopReadsItsBufferOnEveryThread() {
        double bps = ReadBandwidth.plainLoopBytesPerSecond(2, 4 << 20, 2);
        assertTrue(bps > 0 && Double.isFinite(bps), "bytes per second: " + bps);
    }

    @Test
    void plainLoopRejectsEmptyWork() {
        assertThrows(IllegalArgumentException.class, () -> ReadBandwidth.plainLoopBytesPerSecond(0, 1 << 20, 1));
        assertThrows(IllegalArgumentException.class, () -> ReadBandwidth.plainLoopBytesPerSecond(2, 64, 1));
        assertThrows(IllegalArgumentException.class, () -> ReadBandwidth.plainLoopBytesPerSecond(1, 1 << 20, 0));
    }
}
