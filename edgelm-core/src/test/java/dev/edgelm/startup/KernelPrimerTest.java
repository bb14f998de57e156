package dev.edgelm.startup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.model.Qwen35Config;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.tensor.CausalAttention;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class KernelPrimerTest {
    /** The primer is only worth its passes if its kernels take the branches the released models take. */
    @Test
    void tinyModelHasTheReleasedHeadGeometry() {
        Qwen35Config tiny = KernelPrimer.SHAPE.config();
        for (SynthShape released : SynthShape.RELEASED) {
            Qwen35Config c = released.config();
            assertEquals(c.headDim(), tiny.headDim(), released.size());
            assertEquals(c.rotaryDim(), tiny.rotaryDim(), released.size());
            assertEquals(c.numHeads() / c.numKvHeads(), tiny.numHeads() / tiny.numKvHeads(), released.size());
            assertEquals(c.linearKeyDim(), tiny.linearKeyDim(), released.size());
            assertEquals(c.linearValueDim(), tiny.linearValueDim(), released.size());
        }
        assertEquals(CausalAttention.GROUP, tiny.numHeads() / tiny.numKvHeads());
        boolean linear = false;
        boolean full = false;
        for (int l = 0; l < tiny.numLayers(); l++) {
            full |= tiny.fullAttention()[l];
            linear |= !tiny.fullAttention()[l];
        }
        assertTrue(linear && full, "both kinds of layer");
    }

    @Test
    void runsEveryPassAndLeavesNoFileBehind() throws IOException {
        long before = primerFiles();
        assertEquals(KernelPrimer.PASSES, KernelPrimer.runToCompletion());
        assertEquals(before, primerFiles());
    }

    private static long primerFiles() throws IOException {
        long n = 0;
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of(System.getProperty("java.io.tmpdir")), "edgelm-primer-*")) {
            for (Path ignored : d) {
                n++;
            }
        }
        return n;
    }
}
