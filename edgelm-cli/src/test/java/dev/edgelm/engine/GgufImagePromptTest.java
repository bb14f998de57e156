package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.cli.CliRunnerAccess;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.vision.PatchGrid;
import dev.edgelm.vision.TinyVlChat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * tiny-vl as a converted GGUF (with a tokenizer, so the image token is found by its text) plus llama.cpp's mmproj
 * file beside it: the multimodal goldens again.
 */
class GgufImagePromptTest {
    static final String GOLDEN = "qwen35/tiny-vl/golden/";
    static final float EMBEDS_INT8 = 0.014f; // measured 7.0e-3
    static final float LOGITS_INT8 = 0.26f; // measured 0.13 (text weights in Q8_0 too)

    /** {@code llama.cpp-TYPE}: llama.cpp's own projector file beside the model; {@code edgelm-TYPE}: the one convert writes. */
    @ParameterizedTest
    @ValueSource(strings = {"llama.cpp-f32", "llama.cpp-f16", "edgelm-f32", "edgelm-bf16"})
    void convertedModelWithProjectorMatchesTheGoldens(String projector, @TempDir Path dir) throws Exception {
        Path folder = Files.createDirectory(dir.resolve("tiny-vl-chat"));
        TinyVlChat.write(folder);
        Path model = dir.resolve("tiny-vl.gguf");
        String type = projector.substring(projector.indexOf('-') + 1);
        if (projector.startsWith("llama.cpp")) {
            assertEquals(0, CliRunnerAccess.run("convert", folder.toString(), "-o", model.toString(), "--no-mmproj",
                    "--quant", "bf16"));
            Files.copy(Fixtures.path("gguf/vision/mmproj-tiny-vl-" + type + ".gguf"), dir.resolve("mmproj-tiny-vl-" + type + ".gguf"));
        } else {
            assertEquals(0, CliRunnerAccess.run("convert", folder.toString(), "-o", model.toString(), "--mmproj-type", type,
                    "--quant", "bf16"));
            assertTrue(Files.isRegularFile(dir.resolve("mmproj-tiny-vl.gguf")));
        }
        try (Engine engine = Engine.load(model, new EngineOptions(2, 256, 512))) {
            assertTrue(engine.hasVision());
            assertEquals(506, engine.visionTokens().imagePad());
            int[] thw = Fixtures.npy(GOLDEN + "image_grid_thw.npy").toIntArray();
            ImageEmbedding image = engine.encodeImage(new PatchGrid.Pixels(Fixtures.npy(GOLDEN + "pixel_values.npy").floats(),
                    new PatchGrid(thw[0], thw[1], thw[2])));
            assertTrue(Fixtures.maxAbsDiff(Fixtures.npy(GOLDEN + "image_embeds.npy").floats(), image.rows(), 0) <= 1e-5f);
            int[] ids = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
            Session s = engine.newSession();
            float[] last = s.prefill(ids, List.of(image));
            float[] golden = Fixtures.npy(GOLDEN + "mm_logits.npy").floats();
            float[] goldenLast = Arrays.copyOfRange(golden, golden.length - 512, golden.length);
            assertTrue(Fixtures.maxAbsDiff(goldenLast, last, 0) <= 1e-3f);
            GenerationResult r = s.generate(GenerationOptions.greedy().toBuilder().maxNewTokens(8).build());
            assertArrayEquals(Fixtures.npy(GOLDEN + "mm_greedy_ids.npy").toIntArray(), r.tokens());
        }
    }

    /**
     * What {@code --quant int8} costs the image path: the merger's two matrices become Q8_0 (the encoder stays F16).
     * Measured on tiny-vl and stated in docs/vision.md; the bounds are twice the measured figures.
     */
    @Test
    void int8MergerCost(@TempDir Path dir) throws Exception {
        Path folder = Files.createDirectory(dir.resolve("tiny-vl-chat"));
        TinyVlChat.write(folder);
        Path model = dir.resolve("tiny-vl.gguf");
        assertEquals(0, CliRunnerAccess.run("convert", folder.toString(), "-o", model.toString(), "--quant", "int8"));
        try (Engine engine = Engine.load(model, new EngineOptions(2, 256, 512))) {
            int[] thw = Fixtures.npy(GOLDEN + "image_grid_thw.npy").toIntArray();
            ImageEmbedding image = engine.encodeImage(new PatchGrid.Pixels(Fixtures.npy(GOLDEN + "pixel_values.npy").floats(),
                    new PatchGrid(thw[0], thw[1], thw[2])));
            float embeds = Fixtures.maxAbsDiff(Fixtures.npy(GOLDEN + "image_embeds.npy").floats(), image.rows(), 0);
            int[] ids = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
            float[] last = engine.newSession().prefill(ids, List.of(image));
            float[] golden = Fixtures.npy(GOLDEN + "mm_logits.npy").floats();
            float logits = Fixtures.maxAbsDiff(Arrays.copyOfRange(golden, golden.length - 512, golden.length), last, 0);
            System.out.printf("int8: image embeddings max abs diff %.3g, last logits %.3g%n", embeds, logits);
            assertTrue(embeds <= EMBEDS_INT8 && logits <= LOGITS_INT8, embeds + " " + logits);
        }
    }
}
