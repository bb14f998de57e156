package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.npy.Npy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenizeAndTemplateCommandTest {
    private static final Path TINY = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");

    private static String golden(String name) throws IOException {
        return Files.readString(TINY.resolve("golden/" + name));
    }

    private static String ids(String npy) {
        return Arrays.stream(Npy.read(TINY.resolve("golden/" + npy)).toIntArray()).mapToObj(Integer::toString)
                .collect(Collectors.joining(" "));
    }

    @Test
    void tokenizePrintsTheGoldenIds(@TempDir Path tmp) throws IOException {
        Path prompt = tmp.resolve("prompt.txt");
        Files.writeString(prompt, golden("turn1_prompt.txt"));
        CliRunner r = CliRunner.run("tokenize", TINY.toString(), "--file", prompt.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(ids("turn1_prompt_ids.npy") + System.lineSeparator(), r.out());
        CliRunner viaJson = CliRunner.run("tokenize", TINY.resolve("tokenizer.json").toString(), "--text", golden("turn1_prompt.txt"));
        assertEquals(r.out(), viaJson.out());
    }

    @Test
    void splitSpecialEncodesSpecialTokenStringsAsText() {
        assertEquals("8194" + System.lineSeparator(), CliRunner.run("tokenize", TINY.toString(), "--text", "<|im_end|>").out());
        String split = CliRunner.run("tokenize", TINY.toString(), "--text", "<|im_end|>", "--split-special").out().strip();
        assertFalse(split.contains("8194"), split);
        assertTrue(split.split(" ").length > 1, split);
        // <think> is an added token but not a special one: still matched
        assertEquals("8216", CliRunner.run("tokenize", TINY.toString(), "--text", "<think>", "--split-special").out().strip());
    }

    @Test
    void decodePrintsTheText() throws IOException {
        String reply = Arrays.stream(Npy.read(TINY.resolve("golden/turn1_generated_ids.npy")).toIntArray())
                .limit(8).mapToObj(Integer::toString).collect(Collectors.joining(","));
        assertEquals(golden("turn1_reply.txt"), CliRunner.run("tokenize", TINY.toString(), "--decode", reply).out());
        assertEquals("<|im_end|>", CliRunner.run("tokenize", TINY.toString(), "--decode", "8194").out());
        assertEquals("", CliRunner.run("tokenize", TINY.toString(), "--decode", "8194", "--skip-special").out());
    }

    @Test
    void templatePrintsTheGoldenPrompt(@TempDir Path tmp) throws IOException {
        Path messages = tmp.resolve("conversation.json");
        Files.writeString(messages, "[{\"role\": \"system\", \"content\": \"You are a helpful assistant.\"},"
                + " {\"role\": \"user\", \"content\": \"What is the capital of France? Answer in one word.\"}]");
        CliRunner r = CliRunner.run("template", TINY.toString(), "--messages", messages.toString(), "--no-think");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(golden("turn1_prompt.txt"), r.out());
        CliRunner idsOut = CliRunner.run("template", TINY.toString(), "--messages", messages.toString(), "--no-think", "--ids");
        assertEquals(ids("turn1_prompt_ids.npy"), idsOut.out().strip());
        CliRunner byDefault = CliRunner.run("template", TINY.toString(), "--messages", messages.toString());
        assertEquals(golden("turn1_prompt.txt"), byDefault.out(), "thinking off by default, as in edgelm run");
    }

    @Test
    void templateWithTools(@TempDir Path tmp) throws IOException {
        Path messages = tmp.resolve("m.json");
        Files.writeString(messages, "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}");
        Path tools = tmp.resolve("tools.json");
        Files.writeString(tools, "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}]");
        CliRunner r = CliRunner.run("template", TINY.toString(), "--messages", messages.toString(), "--tools", tools.toString(),
                "--think");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}\n</tools>"), r.out());
        assertTrue(r.out().endsWith("<|im_start|>assistant\n<think>\n"), r.out());
    }

    @Test
    void templateErrorsAreOneClearLine(@TempDir Path tmp) throws IOException {
        Path messages = tmp.resolve("m.json");
        Files.writeString(messages, "[{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"system\", \"content\": \"late\"}]");
        CliRunner r = CliRunner.run("template", TINY.toString(), "--messages", messages.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().startsWith("error: chat template "), r.err());
        assertTrue(r.err().strip().endsWith(": System message must be at the beginning."), r.err());
        assertFalse(r.err().contains("\tat "), r.err());
        CliRunner bad = CliRunner.run("tokenize", TINY.toString(), "--decode", "1,x");
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("'x' is not a token id"), bad.err());
    }
}
