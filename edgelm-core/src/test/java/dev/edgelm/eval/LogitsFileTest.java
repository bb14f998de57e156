package dev.edgelm.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.EdgeLmException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The base file's encoding and its reader's checks. */
class LogitsFileTest {

    @Test
    void encodingFollowsLlamaCpp() {
        // logits 0, 1, 2, -30: max 2, min clamped to 2 - 16 = -14, scale 16/65535
        float[] l = {0, 1, 2, -30};
        char[] row = new char[LogitsFile.rowUnits(4)];
        double nll = LogitsFile.encode(l, 0, 4, 1, row);
        double lse = Math.log(Math.exp(0) + Math.exp(1) + Math.exp(2) + Math.exp(-30));
        assertEquals(lse - 1, nll, 1e-6);
        assertEquals(16f / 65535f, LogitsFile.scale(row));
        assertEquals((float) (-14 - lse), LogitsFile.minLogProb(row), 1e-6);
        assertEquals(65535, (int) row[4 + 2]); // the top token: (2 - -14) / scale
        assertEquals(0, (int) row[4 + 3]); // below the floor
        assertEquals(Math.round(14 / (16.0 / 65535)), (int) row[4]);
        assertEquals(0 - lse, LogitsFile.logProb(row, 0), 16.0 / 65535);
        assertEquals(4, LogitsFile.nearestInt(4.5f)); // ties to even, as ggml's nearest_int
        assertEquals(6, LogitsFile.nearestInt(5.5f));
    }

    @Test
    void lyingHeadersAreRejectedBeforeAnyAllocation(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("bad.kld");
        ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
        b.put("_logits_".getBytes()).putInt(1 << 20).putInt(1 << 20).putInt(Integer.MAX_VALUE);
        Files.write(f, b.array());
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> new LogitsFile.Reader(f));
        assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        Files.write(f, "not a base file at all".getBytes());
        e = assertThrows(EdgeLmException.class, () -> new LogitsFile.Reader(f));
        assertTrue(e.getMessage().contains("_logits_"), e.getMessage());
        byte[] llama = Files.readAllBytes(LlamaFixtures.BASE);
        Files.write(f, java.util.Arrays.copyOf(llama, llama.length - 2));
        e = assertThrows(EdgeLmException.class, () -> new LogitsFile.Reader(f));
        assertTrue(e.getMessage().contains("implies " + llama.length + " bytes"), e.getMessage());
    }
}
