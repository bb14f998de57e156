package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.PatchGrid;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import javax.imageio.ImageIO;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Sessions with an image: the vision tower found in the checkpoint folder, the golden pixel tensor in, the golden
 * multimodal logits out; chunked prefill through the image, a second turn on the reused state and a rollback equal
 * to rescoring from scratch.
 */
class ImagePromptTest {
    static final String GOLDEN = "qwen35/tiny-vl/golden/";
    static Engine engine;
    static ImageEmbedding image;
    static int[] ids;

    @BeforeAll
    static void open() {
        engine = Engine.load(Fixtures.path("qwen35/tiny-vl"), new EngineOptions(2, 256, 512));
        int[] thw = Fixtures.npy(GOLDEN + "image_grid_thw.npy").toIntArray();
        image = engine.encodeImage(new PatchGrid.Pixels(Fixtures.npy(GOLDEN + "pixel_values.npy").floats(),
                new PatchGrid(thw[0], thw[1], thw[2])));
        ids = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static float[] lastRow(String file) {
        float[] all = Fixtures.npy(GOLDEN + file).floats();
        return Arrays.copyOfRange(all, all.length - 512, all.length);
    }

    @Test
    void encodedImageMatchesTheGoldenEmbeddings() {
        assertEquals(4, image.gridRows());
        assertEquals(16, image.gridCols());
        float diff = Fixtures.maxAbsDiff(Fixtures.npy(GOLDEN + "image_embeds.npy").floats(), image.rows(), 0);
        assertTrue(diff <= 1e-5f, "image embeddings: " + diff);
        assertEquals(506, engine.visionTokens().imagePad());
    }

    /** The Java API's image forms: a file path (or path string), the file's bytes, a BufferedImage. */
    @Test
    void pathBytesAndBufferedImageGiveTheGoldenEmbeddings() throws Exception {
        Path file = Fixtures.path(GOLDEN + "image.png");
        float[] golden = Fixtures.npy(GOLDEN + "image_embeds.npy").floats();
        for (Object image : List.of(file, file.toString(), Files.readAllBytes(file), ImageIO.read(file.toFile()))) {
            ImageEmbedding e = engine.encodeImage(image);
            assertEquals(64, e.tokens(), image.getClass().getSimpleName());
            assertTrue(Fixtures.maxAbsDiff(golden, e.rows(), 0) <= 1e-5f, image.getClass().getSimpleName());
        }
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> engine.encodeImage(42));
        assertTrue(e.getMessage().contains("Integer"), e.getMessage());
    }

    @Test
    void greedyGenerationMatchesTheGoldens() {
        Session s = engine.newSession();
        float[] last = s.prefill(ids, List.of(image));
        assertTrue(Fixtures.maxAbsDiff(lastRow("mm_logits.npy"), last, 0) <= 1e-3f);
        GenerationResult r = s.generate(GenerationOptions.greedy().toBuilder().maxNewTokens(8).build());
        assertArrayEquals(Fixtures.npy(GOLDEN + "mm_greedy_ids.npy").toIntArray(), r.tokens());
    }

    @Test
    void chunkBoundariesInsideTheImageRunChangeNothing() {
        float[] once = engine.newSession().prefill(ids, List.of(image), ChunkPlan.maxChunk(512));
        for (ChunkPlan plan : List.of(ChunkPlan.explicit(9, 30, 30, 13), ChunkPlan.maxChunk(5))) {
            float[] chunked = engine.newSession().prefill(ids, List.of(image), plan);
            assertTrue(Fixtures.maxAbsDiff(once, chunked, 0) <= 1e-4f, plan.toString());
        }
    }

    /** Turn 1 holds the image; turn 2 (text) goes on the reused state and must equal one pass over everything. */
    @Test
    void secondTurnOnTheReusedStateEqualsRescoringFromScratch() {
        Session s = engine.newSession();
        s.prefill(ids, List.of(image));
        GenerationResult reply = s.generate(GenerationOptions.greedy().toBuilder().maxNewTokens(5).build());
        Session.Checkpoint afterReply = s.checkpoint();
        int[] turn2 = {12, 34, 56, 78, 90};
        float[] reused = s.prefill(turn2);

        int[] all = concat(ids, reply.tokens(), turn2);
        float[] scratch = engine.newSession().prefill(all, List.of(image));
        assertTrue(Fixtures.maxAbsDiff(scratch, reused, 0) <= 1e-4f, "turn 2 on the reused state vs from scratch");

        // back to the end of the reply (the delta comes back with the checkpoint), another second turn
        s.rollback(afterReply);
        int[] other = {7, 7, 7};
        float[] rolled = s.prefill(other);
        float[] scratch2 = engine.newSession().prefill(concat(ids, reply.tokens(), other), List.of(image));
        assertTrue(Fixtures.maxAbsDiff(scratch2, rolled, 0) <= 1e-4f, "after rollback vs from scratch");

        // a fork keeps the delta too
        Session fork = s.fork();
        assertTrue(Fixtures.maxAbsDiff(s.decode(3), fork.decode(3), 0) <= 1e-6f);
    }

    @Test
    void padRunOfTheWrongLengthIsAClearError() {
        int[] shorter = new int[ids.length - 1];
        System.arraycopy(ids, 0, shorter, 0, 8);
        System.arraycopy(ids, 9, shorter, 8, ids.length - 9);
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> engine.newSession().prefill(shorter, List.of(image)));
        assertTrue(e.getMessage().contains("64") && e.getMessage().contains("63"), e.getMessage());
    }

    @Test
    void textModelWithoutVisionTowerRefusesImages() {
        try (Engine text = Engine.load(Fixtures.path("qwen35/tiny-a"), new EngineOptions(1, 64, 64))) {
            EdgeLmException e = assertThrows(EdgeLmException.class, text::vision);
            assertTrue(e.getMessage().contains("no vision tower"), e.getMessage());
        }
    }

    static int[] concat(int[]... parts) {
        int n = 0;
        for (int[] p : parts) {
            n += p.length;
        }
        int[] out = new int[n];
        int o = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }
}
