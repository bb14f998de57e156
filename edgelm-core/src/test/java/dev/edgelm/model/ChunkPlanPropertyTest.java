package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Logits must not depend on how a prompt is cut into chunks. */
class ChunkPlanPropertyTest {

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void randomPlansGiveTheSinglePassLogits(String fixture) {
        int[] ids = Fixtures.npy("qwen35/" + fixture + "/golden/long_prompt_ids.npy").toIntArray();
        try (Qwen35Model m = HuggingFaceLoader.load(Fixtures.path("qwen35/" + fixture), 2)) {
            float[] single = m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
            SplittableRandom random = new SplittableRandom(20261130L);
            for (int trial = 0; trial < 12; trial++) {
                List<Integer> sizes = new ArrayList<>();
                int left = ids.length;
                while (left > 0) {
                    // mostly small chunks, sometimes large ones, so boundaries land everywhere
                    int max = random.nextInt(4) == 0 ? left : Math.min(left, 1 + random.nextInt(16));
                    int s = 1 + random.nextInt(max);
                    sizes.add(s);
                    left -= s;
                }
                int[] plan = sizes.stream().mapToInt(Integer::intValue).toArray();
                float[] chunked = m.prefill(m.newState(ids.length), ids, ChunkPlan.explicit(plan), true);
                float diff = Fixtures.maxAbsDiff(single, chunked, 0);
                assertTrue(diff <= 1e-4f, fixture + " plan " + sizes + ": max abs diff " + diff);
            }
        }
    }

    @Test
    void maxChunkSplitsEvenlyWithARemainder() {
        assertEquals(List.of(512, 512, 76), ChunkPlan.maxChunk(512).split(1100));
        assertEquals(List.of(3), ChunkPlan.maxChunk(512).split(3));
        assertEquals(List.of(), ChunkPlan.maxChunk(4).split(0));
    }

    @Test
    void explicitSizesMustAddUpToThePrompt() {
        assertEquals(List.of(17, 13, 11), ChunkPlan.explicit(17, 13, 11).split(41));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> ChunkPlan.explicit(17, 13).split(41));
        assertTrue(e.getMessage().contains("add up to 30") && e.getMessage().contains("41 tokens"), e.getMessage());
        assertThrows(EdgeLmException.class, () -> ChunkPlan.explicit(3, 0));
        assertThrows(EdgeLmException.class, () -> ChunkPlan.maxChunk(0));
    }
}
