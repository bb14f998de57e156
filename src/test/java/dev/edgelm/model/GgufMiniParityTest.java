package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.npy.Npy;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Files written by llama.cpp itself load in EdgeLM and give llama.cpp's logits. */
class GgufMiniParityTest {
    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");

    static float[] logits(Path gguf, int[] ids) {
        try (Qwen35Model m = GgufLoader.load(gguf, 2)) {
            return m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
        }
    }

    @Test
    void bf16FileInFloat32MatchesTheFloat32Reference() {
        int[] ids = Npy.read(MINI.resolve("prompt_ids.npy")).toIntArray();
        Npy.Array ref = Npy.read(MINI.resolve("logits-F32.npy"));
        Path file = MINI.resolve("qwen35-mini-BF16.gguf");
        try (Qwen35Model m = GgufLoader.load(file, 2)) {
            Qwen35Config c = m.config();
            assertEquals(256, c.hiddenSize());
            assertEquals("LLLF", c.layerPattern());
            assertEquals(2, c.linearKeyHeads());
            assertEquals(4, c.linearValueHeads());
            assertEquals(128, c.linearValueDim());
            assertEquals(64, c.rotaryDim());
            assertEquals(1024, c.vocabSize());
            assertTrue(c.valueHeadsTiled());
            assertTrue(!c.tiedEmbeddings());
        }
        float[] got = logits(file, ids);
        int vocab = ref.dim(1);
        float maxAbs = Logit.maxAbsDiff(ref.floats(), got);
        int same = Logit.sameArgmax(ref.floats(), got, ids.length, vocab);
        System.out.printf("mini BF16 (float32 compute) vs logits-F32: max abs %.2e, same top-1 %d/64%n", maxAbs, same);
        assertTrue(maxAbs <= 1e-3, "max abs " + maxAbs);
        assertEquals(ids.length, same);
    }
}
