package dev.edgelm.engine;

import static dev.edgelm.engine.SessionTest.assertClose;
import static dev.edgelm.engine.SessionTest.greedyUpTo;
import static dev.edgelm.engine.SessionTest.row;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.npy.Npy;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The warm-up's passes share the model (its workspace and thread pool) with every session, so a session
 * after a warm-up must still reproduce the PyTorch reference: the prefill logits and the greedy tokens of
 * {@code tiny-a}, and the logits it computed before the warm-up. (Not bit for bit: while methods still run
 * uncompiled, the Vector API's fallback code sums a reduction's lanes in another order than the compiled
 * code, so the first runs of a process may differ from later ones in the last bits.)
 */
class WarmupTest {
    private static final Path TINY_A = SessionTest.TINY_A;
    private static final int[] PROMPT = Npy.read(TINY_A.resolve("golden/prompt_ids.npy")).toIntArray();
    private static final int[] GREEDY = Npy.read(TINY_A.resolve("golden/greedy_ids.npy")).toIntArray();
    private static final float[] STEP_LOGITS = Npy.read(TINY_A.resolve("golden/greedy_step_logits.npy")).floats();

    private static void assertReproducesTheReference(Engine engine, float[] before) {
        Session s = engine.newSession();
        float[] logits = s.prefill(PROMPT);
        assertClose(row(STEP_LOGITS, 0), logits, 1e-3f);
        assertClose(before, logits, 1e-4f);
        assertArrayEquals(GREEDY, s.generate(greedyUpTo(GREEDY.length)).tokens());
    }

    @Test
    void aSessionAfterAWarmupReproducesTheReference() {
        try (Engine engine = Engine.load(TINY_A, EngineOptions.defaults().withThreads(2))) {
            float[] before = engine.newSession().prefill(PROMPT);
            int passes = Warmup.runToCompletion(engine);
            assertTrue(passes >= 1 && passes <= Warmup.MAX_PASSES, "passes " + passes);
            assertReproducesTheReference(engine, before);
        }
    }

    @Test
    void closeStopsTheBackgroundPassesAndLeavesTheModelToTheSession() {
        try (Engine engine = Engine.load(TINY_A, EngineOptions.defaults().withThreads(2))) {
            float[] before = engine.newSession().prefill(PROMPT);
            Warmup warmup = Warmup.start(engine);
            warmup.close();
            assertTrue(warmup.finished());
            assertTrue(warmup.passes() <= Warmup.MAX_PASSES);
            assertReproducesTheReference(engine, before);
            warmup.close(); // a second close is harmless
        }
    }
}
