package dev.edgelm.cli;

import static dev.edgelm.cli.HostileModelCliTest.assertClearError;
import static dev.edgelm.cli.HostileModels.TINY_CHAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code convert} writes only files the runtime accepts: what the loaders refuse is refused before writing. */
@Timeout(120)
class ConvertValidationCliTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    int n;

    /** tiny-chat with one of its JSON files edited. */
    Path edited(String file, Consumer<ObjectNode> edit) throws IOException {
        Path p = HostileModels.copy(dir, TINY_CHAT, "case-" + n++);
        ObjectNode root = (ObjectNode) JSON.readTree(p.resolve(file).toFile());
        edit.accept(root);
        Files.writeString(p.resolve(file), JSON.writeValueAsString(root));
        return p;
    }

    void refused(Path checkpoint, String... fragments) {
        Path out = dir.resolve("out.gguf");
        assertClearError(CliRunner.run("convert", checkpoint.toString(), "-o", out.toString()), fragments);
        assertFalse(Files.exists(out), "nothing written");
    }

    static ObjectNode model(ObjectNode root) {
        return (ObjectNode) root.get("model");
    }

    @Test
    void aTokenizerWithoutMergesIsRefused() throws IOException {
        refused(edited("tokenizer.json", r -> model(r).remove("merges")), "model.merges is missing");
        refused(edited("tokenizer.json", r -> model(r).putArray("merges")), "model.merges is empty");
    }

    @Test
    void malformedMergesAreRefused() throws IOException {
        refused(edited("tokenizer.json", r -> ((ArrayNode) model(r).get("merges")).insert(0, "a b c")), "is not a pair of tokens");
        refused(edited("tokenizer.json", r -> ((ArrayNode) model(r).get("merges")).insert(0, "zzzq qqqz")), "is not in the vocabulary");
    }

    @Test
    void aVocabularyMissingByteTokensIsRefused() throws IOException {
        refused(edited("tokenizer.json", r -> ((ObjectNode) model(r).get("vocab")).remove("!")), "no token for byte 0x21");
    }

    @Test
    void anUnsupportedNormalizerIsRefused() throws IOException {
        refused(edited("tokenizer.json", r -> r.putObject("normalizer").put("type", "Lowercase")), "normalizer.type 'Lowercase' is not supported");
        refused(edited("tokenizer.json", r -> r.putObject("normalizer").put("type", "NFKC")), "normalizer NFKC cannot be written to a GGUF file");
    }

    @Test
    void addedTokensThatAreNotAListAreAnError() throws IOException {
        refused(edited("tokenizer.json", r -> r.put("added_tokens", "x")), "added_tokens is string, expected a list");
    }

    @Test
    void anOutOfVocabularyEosTokenIdIsRefused() throws IOException {
        refused(edited("generation_config.json", r -> r.putArray("eos_token_id").add(99999)), "99999");
    }

    @Test
    void aTemplateWithASyntaxErrorIsRefused() throws IOException {
        Path p = HostileModels.copy(dir, TINY_CHAT, "bad-template");
        Files.writeString(p.resolve("chat_template.jinja"), "{% for m in messages %}{{ m.content }}");
        refused(p, "chat_template");
    }

    @Test
    void theUnmodifiedCheckpointConverts() {
        CliRunner r = CliRunner.run("convert", TINY_CHAT.toString(), "-o", dir.resolve("ok.gguf").toString());
        assertEquals(0, r.exitCode(), r.err());
    }
}
