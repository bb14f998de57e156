package dev.edgelm.cli;

import static dev.edgelm.cli.HostileModels.MINI_BF16;
import static dev.edgelm.cli.HostileModels.TINY_A;
import static dev.edgelm.cli.HostileModels.TINY_CHAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.model.Qwen35GgufLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model files that lie about their sizes or carry numbers that poison the output: each command ends with one clear
 * line naming the file and field, exit 1, no output file, no stack trace.
 */
@Timeout(120)
class HostileModelCliTest {
    @TempDir
    Path dir;

    static void assertClearError(CliRunner r, String... fragments) {
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().startsWith("error: "), r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        for (String f : fragments) {
            assertTrue(r.err().contains(f), "'" + f + "' in: " + r.err());
        }
    }

    /** Every command that reads a model, on {@code model}; none may succeed or leave an output. */
    void everyCommandRefuses(Path model, String... fragments) {
        Path out = dir.resolve("out.npy");
        assertClearError(CliRunner.run("inspect", model.toString()), fragments);
        assertClearError(CliRunner.run("score", model.toString(), "--tokens", "1,2", "-o", out.toString(), "--threads", "1"), fragments);
        assertClearError(CliRunner.run("run", model.toString(), "--prompt", "Hi", "--max-tokens", "2", "--threads", "1"), fragments);
        assertFalse(Files.exists(out));
        if (Files.isDirectory(model)) {
            Path gguf = dir.resolve("out.gguf");
            assertClearError(CliRunner.run("convert", model.toString(), "-o", gguf.toString()), fragments);
            assertFalse(Files.exists(gguf));
        }
    }

    @Test
    void aGgufDeclaringABillionLayersIsRefusedBeforeAnythingIsAllocated() {
        for (long layers : List.of(1_000_000_000L, 2_147_483_647L)) {
            Path p = HostileModels.gguf(dir, "layers-" + layers + ".gguf", Map.of(Qwen35GgufLayout.BLOCK_COUNT, GgufValue.u32(layers)));
            everyCommandRefuses(p, p.toString(), Qwen35GgufLayout.BLOCK_COUNT + " = " + layers, "56 tensors");
        }
    }

    @Test
    void aConfigDeclaringABillionLayersIsRefused() {
        for (int layers : List.of(1_000_000_000, Integer.MAX_VALUE)) {
            Path p = HostileModels.checkpoint(dir, TINY_CHAT, "layers-" + layers, t -> {
                t.put("num_hidden_layers", layers);
                t.remove("layer_types");
            });
            everyCommandRefuses(p, "config.json", "num_hidden_layers = " + layers, "edgelm.limit.layers");
        }
    }

    @Test
    void hyperParametersOfTheWrongTypeRangeOrIntegralityNameTheirField() {
        Map<String, Consumer<ObjectNode>> cases = Map.of(
                "field 'rms_norm_eps' = \"x\" is not a number", t -> t.put("rms_norm_eps", "x"),
                "field 'rms_norm_eps' = -1.0E-6 is not a number above 0", t -> t.put("rms_norm_eps", -1e-6),
                "rms_norm_eps = 1.0E-50 must be a number above 0", t -> t.put("rms_norm_eps", 1e-50),
                "field 'hidden_size' = 128.7 is not a positive integer", t -> t.put("hidden_size", 128.7),
                "field 'rope_theta' = 0 is not a number above 0", t -> ((ObjectNode) t.get("rope_parameters")).put("rope_theta", 0),
                "field 'intermediate_size' = \"256\" is not a positive integer", t -> t.put("intermediate_size", "256"),
                "intermediate_size = 2000000000 is more than 1048576", t -> t.put("intermediate_size", 2_000_000_000),
                "mrope_section[1] = -1", t -> ((ObjectNode) t.get("rope_parameters")).putArray("mrope_section").add(2).add(-1).add(1));
        int i = 0;
        for (Map.Entry<String, Consumer<ObjectNode>> c : cases.entrySet()) {
            Path p = HostileModels.checkpoint(dir, TINY_CHAT, "case-" + i++, c.getValue());
            everyCommandRefuses(p, p.resolve("config.json").toString(), c.getKey());
        }
    }

    @Test
    void anEosTokenOutsideTheVocabularyIsRefusedNotConverted() {
        // tiny-chat's vocabulary has 8,320 tokens (config.json vocab_size)
        Map<String, Consumer<ObjectNode>> cases = Map.of(
                "eos_token_id 99999999 is not a token of the vocabulary (0 to 8319)", t -> t.put("eos_token_id", 99_999_999),
                "eos_token_id 8320 is not a token of the vocabulary", t -> t.putArray("eos_token_id").add(8192).add(8320),
                "eos_token_id \"x\" is not a token", t -> t.put("eos_token_id", "x"));
        int i = 0;
        for (Map.Entry<String, Consumer<ObjectNode>> c : cases.entrySet()) {
            Path p = HostileModels.checkpoint(dir, TINY_CHAT, "eos-" + i++, c.getValue());
            everyCommandRefuses(p, p.resolve("config.json").toString(), c.getKey());
        }
    }

    @Test
    void ggufHyperParametersAreCheckedToo() {
        Map<String, GgufValue> cases = Map.of(
                Qwen35GgufLayout.RMS_EPS + " = NaN", GgufValue.f32(Float.NaN),
                Qwen35GgufLayout.RMS_EPS + " = -1.0", GgufValue.f32(-1f),
                Qwen35GgufLayout.ROPE_FREQ_BASE + " = 0.0", GgufValue.f32(0f),
                Qwen35GgufLayout.ROPE_FREQ_BASE + " = Infinity", GgufValue.f32(Float.POSITIVE_INFINITY));
        int i = 0;
        for (Map.Entry<String, GgufValue> c : cases.entrySet()) {
            String key = c.getKey().substring(0, c.getKey().indexOf(' '));
            Path p = HostileModels.gguf(dir, "case-" + i++ + ".gguf", Map.of(key, c.getValue()));
            everyCommandRefuses(p, p.toString(), c.getKey());
        }
    }

    @Test
    void aZeroRowTokenEmbeddingNamesTheFileAndTheTensor() {
        Path p = HostileModels.gguf(dir, "empty-vocab.gguf", Map.of(), Map.of(Qwen35GgufLayout.TOKEN_EMBD, new long[] {256, 0}));
        everyCommandRefuses(p, p.toString(), "tensor token_embd.weight has dims [256, 0]");
    }

    @Test
    void nanWeightsAreAClearErrorNotNoiseOrNaNOutput() {
        Path p = HostileModels.copy(dir, TINY_CHAT, "nan-weights");
        HostileModels.poisonBf16(p.resolve("model.safetensors"), "model.language_model.norm.weight");
        Path out = dir.resolve("logits.npy");
        CliRunner r = CliRunner.run("score", p.toString(), "--tokens", "1,2,3", "--greedy", "3", "-o", out.toString(), "--threads", "1");
        assertClearError(r, "non-finite logit");
        assertFalse(Files.exists(out), "no NaN written");
        r = CliRunner.run("run", p.toString(), "--prompt", "Hi", "--max-tokens", "4", "--threads", "1");
        assertClearError(r, "non-finite logit");
        assertEquals("", r.out(), "no '!!!' printed");
    }

    @Test
    void badUtf8InATemplateSaysSo() throws Exception {
        Path p = HostileModels.copy(dir, TINY_CHAT, "bad-utf8");
        byte[] template = Files.readAllBytes(p.resolve("chat_template.jinja"));
        template[10] = (byte) 0xff;
        Files.write(p.resolve("chat_template.jinja"), template);
        CliRunner r = CliRunner.run("run", p.toString(), "--prompt", "Hi", "--max-tokens", "2", "--threads", "1");
        assertClearError(r, p.resolve("chat_template.jinja") + ": not valid UTF-8 text (bad byte 0xff at offset 10)");
        Path gguf = dir.resolve("bad.gguf");
        r = CliRunner.run("convert", p.toString(), "-o", gguf.toString());
        assertClearError(r, "not valid UTF-8 text");
        assertFalse(Files.exists(gguf));
    }

    @Test
    void theUnmodifiedFilesStillWork() {
        // the same commands on the files the hostile ones were made from: the checks refuse only what is wrong
        Path gguf = HostileModels.gguf(dir, "same.gguf", Map.of());
        CliRunner r = CliRunner.run("inspect", gguf.toString());
        assertEquals(0, r.exitCode(), r.err());
        r = CliRunner.run("score", MINI_BF16.toString(), "--tokens", "1,2", "-o", dir.resolve("a.npy").toString(), "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        Path ckpt = HostileModels.checkpoint(dir, TINY_A, "same", t -> { });
        r = CliRunner.run("score", ckpt.toString(), "--tokens", "1,2", "-o", dir.resolve("b.npy").toString(), "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
    }
}
