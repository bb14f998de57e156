package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.vision.PatchGrid;
import dev.edgelm.vision.TinyVlChat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** run, score and benchmark with image files, end to end through the real commands on tiny-vl. */
class VisionFilesCliTest {
    static final String GOLDEN = "qwen35/tiny-vl/golden/";
    static final Path TINY_VL = Path.of("src/test/resources/fixtures/qwen35/tiny-vl");
    static final Path IMAGE = TINY_VL.resolve("golden/image.png");

    static String ids(int[] ids) {
        return Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    @Test
    void scoreWithTheImageFileGivesTheGoldenLogitsEmbeddingsAndGreedyIds(@TempDir Path dir) {
        int[] prompt = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
        Path logits = dir.resolve("logits.npy");
        Path embeddings = dir.resolve("embeds.npy");
        CliRunner r = CliRunner.run("score", TINY_VL.toString(), "--tokens", ids(prompt), "--images", IMAGE.toString(),
                "--greedy", "8", "--chunk-size", "20", "-o", logits.toString(), "--image-embeddings", embeddings.toString(),
                "--threads", "2");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("greedy: " + ids(Fixtures.npy(GOLDEN + "mm_greedy_ids.npy").toIntArray()).replace(",", " "))
                || r.out().contains("greedy: " + ids(Fixtures.npy(GOLDEN + "mm_greedy_ids.npy").toIntArray())), r.out());
        float[] golden = Fixtures.npy(GOLDEN + "mm_logits.npy").floats();
        float[] got = Npy.read(logits).floats();
        assertTrue(Fixtures.maxAbsDiff(golden, got, 0) <= 1e-3f);
        assertTrue(Fixtures.maxAbsDiff(Fixtures.npy(GOLDEN + "image_embeds.npy").floats(), Npy.read(embeddings).floats(), 0) <= 1e-5f);
    }

    @Test
    void aPadRunOfTheWrongLengthNamesTheImageAndBothCounts(@TempDir Path dir) {
        int[] prompt = Fixtures.npy(GOLDEN + "mm_input_ids.npy").toIntArray();
        int[] shorter = new int[prompt.length - 1];
        System.arraycopy(prompt, 0, shorter, 0, 8);
        System.arraycopy(prompt, 9, shorter, 8, prompt.length - 9);
        Path out = dir.resolve("logits.npy");
        CliRunner r = CliRunner.run("score", TINY_VL.toString(), "--tokens", ids(shorter), "--images", IMAGE.toString(),
                "-o", out.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("image.png gives 64 image tokens") && r.err().contains("has 63"), r.err());
        assertFalse(Files.exists(out));
        // fewer pixels, fewer tokens: smart_resize of 128 x 512 to at most 32768 pixels: beta = sqrt(2), each side
        // floored to a multiple of 32: 64 x 352 -> 4 x 22 patches -> 2 x 11 = 22 merged tokens
        CliRunner small = CliRunner.run("score", TINY_VL.toString(), "--tokens", ids(prompt), "--images", IMAGE.toString(),
                "--image-max-pixels", "32768", "--image-min-pixels", "1024", "-o", out.toString());
        assertEquals(1, small.exitCode());
        assertTrue(small.err().contains("gives 22 image tokens") && small.err().contains("has 64"), small.err());
    }

    /** The command's answer equals a conversation fed the golden pixel tensor: the file went in exactly. */
    @Test
    void runAnswersAboutTheImage(@TempDir Path dir) throws Exception {
        Path model = TinyVlChat.write(Files.createDirectory(dir.resolve("tiny-vl-chat")));
        CliRunner r = CliRunner.run("run", model.toString(), "--image", IMAGE.toString(), "--prompt", "What is it?",
                "--max-tokens", "6", "--temperature", "0", "--threads", "2");
        assertEquals(0, r.exitCode(), r.err());
        String expected;
        try (Engine engine = Engine.load(model, EngineOptions.defaults().withThreads(2))) {
            int[] thw = Fixtures.npy(GOLDEN + "image_grid_thw.npy").toIntArray();
            PatchGrid.Pixels pixels = new PatchGrid.Pixels(Fixtures.npy(GOLDEN + "pixel_values.npy").floats(),
                    new PatchGrid(thw[0], thw[1], thw[2]));
            Conversation chat = Conversation.start(engine, ChatFormat.load(model));
            expected = chat.send(Conversation.userMessage("What is it?", List.of(pixels)),
                    GenerationOptions.greedy().toBuilder().maxNewTokens(6).build(), ChatListener.NONE).text();
        }
        assertEquals(expected + "\n", r.out());
        CliRunner noFile = CliRunner.run("run", model.toString(), "--attachment", dir.resolve("missing.png").toString(),
                "--prompt", "x");
        assertEquals(1, noFile.exitCode());
        assertTrue(noFile.err().contains("missing.png: no such image file"), noFile.err());
    }

    @Test
    void benchmarkReportsImageEncodeTimeAndTokens() {
        CliRunner r = CliRunner.run("benchmark", TINY_VL.toString(), "-p", "8", "-d", "4", "--runs", "1", "--threads", "1",
                "--image", IMAGE.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("256 patches, 64 tokens (4 x 16)"), r.out());
        assertTrue(r.out().contains("Image encode time:"), r.out());
    }

    @Test
    void aNonImageFileIsAClearError(@TempDir Path dir) throws Exception {
        Path bogus = Files.writeString(dir.resolve("notes.png"), "not an image");
        CliRunner r = CliRunner.run("score", TINY_VL.toString(), "--tokens", "1,2", "--images", bogus.toString(),
                "-o", dir.resolve("x.npy").toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("notes.png"), r.err());
    }
}
