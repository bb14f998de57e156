package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The vision surfaces of the command line on the tiny-vl fixture and llama.cpp's mmproj files. */
class VisionCliTest {
    static final Path TINY_VL = Path.of("src/test/resources/fixtures/qwen35/tiny-vl");
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    static final Path MMPROJ_F16 = Path.of("src/test/resources/fixtures/gguf/vision/mmproj-tiny-vl-f16.gguf");

    @Test
    void inspectShowsTheVisionTowerOfACheckpoint() {
        CliRunner r = CliRunner.run("inspect", TINY_VL.toString());
        assertEquals(0, r.exitCode(), r.err());
        // tiny-vl's vision_config: depth 2, hidden 32, 2 heads, MLP 64, patch 16, merge 2, 2304 positions, output 128
        assertTrue(r.out().contains("vision:       2 blocks, width 32, 2 heads x 16, MLP 64"), r.out());
        assertTrue(r.out().contains("patch 16 x 16 (2 frames), merge 2 x 2, position table 48 x 48, output 128"), r.out());
        assertTrue(CliRunner.run("inspect", TINY_A.toString()).out().contains("vision:       none"));
    }

    @Test
    void inspectDescribesAProjectorFileAndFindsItBesideAModel(@TempDir Path dir) throws Exception {
        CliRunner r = CliRunner.run("inspect", MMPROJ_F16.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("vision projector"), r.out());
        assertTrue(r.out().contains("2 blocks, width 32, 2 heads x 16, MLP 64"), r.out());
        assertTrue(r.out().contains("34 tensors"), r.out());

        Path model = dir.resolve("tiny-vl.gguf");
        assertEquals(0, CliRunner.run("convert", TINY_VL.toString(), "-o", model.toString(), "--no-mmproj", "--quant", "bf16").exitCode());
        assertTrue(CliRunner.run("inspect", model.toString()).out().contains("vision:       none"));
        Files.copy(MMPROJ_F16, dir.resolve("mmproj-tiny-vl-f16.gguf"));
        String beside = CliRunner.run("inspect", model.toString()).out();
        assertTrue(beside.contains("(mmproj-tiny-vl-f16.gguf)"), beside);
    }

    @Test
    void aProjectorOfTheWrongKindIsAClearError() {
        CliRunner r = CliRunner.run("score", TINY_VL.toString(), "--tokens", "1,2", "--images",
                "src/test/resources/fixtures/qwen35/tiny-vl/golden/image.png", "--mmproj",
                "src/test/resources/fixtures/gguf/mini/qwen35-mini-BF16.gguf", "-o", "unused.npy");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("not a vision projector"), r.err());
        assertTrue(!Files.exists(Path.of("unused.npy")));
    }

    @Test
    void imagesForAModelWithoutVisionTowerAreAClearError() {
        CliRunner r = CliRunner.run("score", TINY_A.toString(), "--tokens", "1,2", "--images",
                "src/test/resources/fixtures/qwen35/tiny-vl/golden/image.png", "-o", "unused.npy");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("no vision tower") || r.err().contains("no image token"), r.err());
    }
}
