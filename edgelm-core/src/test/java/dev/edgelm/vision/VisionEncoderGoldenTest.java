package dev.edgelm.vision;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.format.npy.Npy;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The vision tower against the PyTorch goldens of tiny-vl (every intermediate), loaded from the checkpoint and
 * from llama.cpp's own mmproj files (F32 and F16).
 */
class VisionEncoderGoldenTest {
    static final String GOLDEN = "qwen35/tiny-vl/golden/";
    static float[] pixels;
    static List<PatchGrid> grids;
    static final Map<String, Map<String, float[]>> runs = new HashMap<>();

    static Map<String, float[]> run(Path source) {
        try (VisionModel vm = VisionModel.open(source, 2)) {
            Map<String, float[]> seen = new HashMap<>();
            float[] out = vm.encoder().encode(pixels, grids, new VisionEncoder.Trace() {
                @Override
                public void patchEmbedding(float[] x, int patches) {
                    seen.put("vision_patch_embed", x.clone());
                }

                @Override
                public void positionEmbedding(float[] pos, int patches) {
                    seen.put("vision_pos_embed", pos.clone());
                }

                @Override
                public void rotaryAngles(float[] angles, int patches) {
                    seen.put("vision_rot_pos_emb", angles.clone());
                }

                @Override
                public void block(int index, float[] x, int patches) {
                    seen.put("vision_block" + index + "_out", x.clone());
                }
            });
            seen.put("image_embeds", out);
            return seen;
        }
    }

    @BeforeAll
    static void encode() {
        pixels = Fixtures.npy(GOLDEN + "pixel_values.npy").floats();
        int[] thw = Fixtures.npy(GOLDEN + "image_grid_thw.npy").toIntArray();
        grids = List.of(new PatchGrid(thw[0], thw[1], thw[2]));
        runs.put("safetensors", run(Fixtures.path("qwen35/tiny-vl")));
        runs.put("f32", run(Fixtures.path("gguf/vision/mmproj-tiny-vl-f32.gguf")));
        runs.put("f16", run(Fixtures.path("gguf/vision/mmproj-tiny-vl-f16.gguf")));
    }

    @AfterAll
    static void clear() {
        runs.clear();
    }

    static final String[] NAMES = {"vision_patch_embed", "vision_pos_embed", "vision_rot_pos_emb", "vision_block0_out",
            "vision_block1_out", "image_embeds"};

    static void check(String run, float tolerance) {
        for (String name : NAMES) {
            Npy.Array golden = Fixtures.npy(GOLDEN + name + ".npy");
            float[] actual = runs.get(run).get(name);
            assertEquals(golden.floats().length, actual.length, name);
            float diff = Fixtures.maxAbsDiff(golden.floats(), actual, 0);
            System.out.printf("%s %s max abs diff %.3g%n", run, name, diff);
            assertTrue(diff <= tolerance, run + " " + name + ": max abs diff " + diff + " > " + tolerance);
        }
    }

    @Test
    void checkpointMatchesEveryIntermediate() {
        check("safetensors", 1e-5f);
    }

    @Test
    void llamaCppF32ProjectorMatchesEveryIntermediate() {
        check("f32", 1e-5f);
    }

    /**
     * F16 holds every BF16 weight of this checkpoint exactly (8 mantissa bits fit in 10, and the magnitudes stay
     * in F16's normal range), so the F16 file meets the float32 bound too.
     */
    @Test
    void llamaCppF16ProjectorMatchesEveryIntermediate() {
        check("f16", 1e-5f);
    }

    @Test
    void imageEmbeddingsShape() {
        assertEquals(64 * 128, runs.get("safetensors").get("image_embeds").length);
        assertArrayEquals(new int[] {1, 8, 32}, new int[] {grids.get(0).t(), grids.get(0).h(), grids.get(0).w()});
    }
}
