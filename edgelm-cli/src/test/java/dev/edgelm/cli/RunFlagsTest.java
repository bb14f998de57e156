package dev.edgelm.cli;

import static dev.edgelm.chat.TinyChat.replyIds;
import static dev.edgelm.chat.TinyChat.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The flags of {@code run} people know from llama.cpp and Ollama, and output that scripts can use. */
class RunFlagsTest {
    static final String MODEL = TinyChat.DIR.toString();
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aPositionalPromptAndShortFlagsAnswerAsTheLongOnesDo() {
        CliRunner r = CliRunner.run("run", MODEL, TinyChat.TURN1, "--system", TinyChat.SYSTEM, "-n", "24", "-t", "1", "-s", "7",
                "-c", "4096");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(text("turn1_reply") + "\n", r.out());
        CliRunner both = CliRunner.run("run", MODEL, "question", "-p", "another");
        assertEquals(1, both.exitCode());
        assertTrue(both.err().contains("two prompts"), both.err());
        CliRunner small = CliRunner.run("run", MODEL, TinyChat.TURN1, "-n", "24", "-c", "40");
        assertTrue(small.err().contains("holds 40"), "-c is the context size: " + small.err());
    }

    @Test
    void jsonHoldsTheAnswerTheStopReasonTheCountsAndTheTimings() throws Exception {
        CliRunner r = CliRunner.run("run", MODEL, TinyChat.TURN1, "--system", TinyChat.SYSTEM, "-n", "24", "-t", "1", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode o = JSON.readTree(r.out());
        assertEquals(text("turn1_reply"), o.get("answer").asText());
        assertEquals("", o.get("thinking").asText());
        assertEquals("stop_token", o.get("stop_reason").asText(), "the golden reply ends with <|im_end|>");
        assertEquals(replyIds("turn1").length, o.get("tokens").get("generated").asInt());
        assertEquals(TinyChat.ids("turn1_prompt_ids").length, o.get("tokens").get("prompt").asInt());
        assertTrue(o.get("timings").get("ttft_seconds").asDouble() > 0);
        assertTrue(o.get("timings").get("decode_tokens_per_second").asDouble() > 0);
        assertEquals(1, r.out().strip().split("\n").length, "one line, one object");
    }

    @Test
    void stopStringsEndTheAnswer() {
        String golden = text("turn1_reply"); // "jobs Whileted hitolveidx\"},\n designed"
        int at = golden.indexOf("hit");
        assertTrue(at > 0, golden);
        CliRunner r = CliRunner.run("run", MODEL, TinyChat.TURN1, "--system", TinyChat.SYSTEM, "-n", "24", "-t", "1",
                "--stop", "hit", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode o;
        try {
            o = JSON.readTree(r.out());
        } catch (IOException e) {
            throw new AssertionError(r.out(), e);
        }
        assertEquals("stop_string", o.get("stop_reason").asText());
        assertFalse(o.get("answer").asText().contains("hit"), o.toString());
        assertTrue(golden.startsWith(o.get("answer").asText()), o.toString());
    }

    @Test
    void rawContinuesThePromptTextWithoutATemplate() {
        String text = "The capital of France is";
        String expected;
        ChatFormat format = ChatFormat.load(TinyChat.DIR);
        try (Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1))) {
            Session s = engine.newSession();
            s.prefill(format.tokenizer().encode(text));
            int[] ids = s.generate(GenerationOptions.builder().maxNewTokens(12).stopTokenIds(format.stopTokenIds()).build()).tokens();
            expected = format.tokenizer().decode(ids, true);
        }
        CliRunner r = CliRunner.run("run", MODEL, text, "--raw", "-n", "12", "-t", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(expected + "\n", r.out());
    }

    @Test
    void aChatTemplateFileReplacesTheModelsTemplate(@TempDir Path dir) throws IOException {
        Path same = dir.resolve("same.jinja");
        Files.copy(TinyChat.DIR.resolve("chat_template.jinja"), same);
        CliRunner r = CliRunner.run("run", MODEL, TinyChat.TURN1, "--system", TinyChat.SYSTEM, "-n", "24", "-t", "1",
                "--chat-template-file", same.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(text("turn1_reply") + "\n", r.out());
        Path broken = dir.resolve("broken.jinja");
        Files.writeString(broken, "{% for m in messages %}{{ m.content }");
        CliRunner bad = CliRunner.run("run", MODEL, "hi", "--chat-template-file", broken.toString());
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().startsWith("error: ") && bad.err().contains(broken.toString()), bad.err());
    }

    @Test
    void penaltiesAreAccepted() {
        CliRunner r = CliRunner.run("run", MODEL, TinyChat.TURN1, "-n", "4", "-t", "1", "--repeat-penalty", "1.1",
                "--presence-penalty", "0.5", "--frequency-penalty", "0.5");
        assertEquals(0, r.exitCode(), r.err());
        CliRunner bad = CliRunner.run("run", MODEL, TinyChat.TURN1, "--frequency-penalty", "NaN");
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("frequency penalty must be a finite number"), bad.err());
    }

    /** Standard output that breaks after its first write, as a pipe into {@code head -c 1} does. */
    static final class ClosingPipe extends OutputStream {
        int writes;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (writes++ > 0) {
                throw new IOException("Broken pipe");
            }
        }
    }

    @Test
    void aClosedStandardOutputStopsGeneration() {
        StringWriter err = new StringWriter();
        int code = Main.execute(ProcessContext.piped(new byte[0]), new PrintWriter(new ClosingPipe(), true),
                new PrintWriter(err, true), "run", MODEL, TinyChat.TURN1, "-n", "24", "-t", "1", "--verbose");
        assertEquals(0, code, err.toString());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("generated tokens: +([0-9]+)").matcher(err.toString());
        assertTrue(m.find(), err.toString());
        assertTrue(Integer.parseInt(m.group(1)) < replyIds("turn1").length, "stopped early: " + err);
    }

    @Test
    void thinkingIsDimOnATerminalUnlessNoColor() {
        for (boolean noColor : new boolean[] {false, true}) {
            Map<String, String> env = noColor ? Map.of("NO_COLOR", "1") : Map.of();
            ProcessContext terminalStderr = new ProcessContext(new ByteArrayInputStream(new byte[0]), false, false,
                    () -> {
                        throw new IOException("no terminal");
                    }, env, true);
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int code = Main.execute(terminalStderr, new PrintWriter(out, true), new PrintWriter(err, true), "run", MODEL,
                    TinyChat.THINK, "--think", "-n", "16", "-t", "1");
            assertEquals(0, code, err.toString());
            assertTrue(err.toString().contains(ReplyPrinter.THINKING) && err.toString().contains(ReplyPrinter.DONE_THINKING));
            assertEquals(!noColor, err.toString().contains("\033[2m"), "NO_COLOR=" + noColor + ": " + err);
        }
    }

    @Test
    void tokenizeReadsStandardInputAndPrintsJsonOrACount() throws IOException {
        byte[] text = TinyChat.TURN1.getBytes(StandardCharsets.UTF_8);
        String ids = RunCommandTest.run(text, "tokenize", MODEL).out().strip();
        assertEquals(CliRunner.run("tokenize", MODEL, "--text", TinyChat.TURN1).out().strip(), ids);
        assertEquals(String.valueOf(ids.split(" ").length), RunCommandTest.run(text, "tokenize", MODEL, "--count").out().strip());
        JsonNode o = JSON.readTree(CliRunner.run("tokenize", MODEL, "--text", TinyChat.TURN1, "--json").out());
        assertEquals(ids.split(" ").length, o.get("count").asInt());
        StringBuilder pieces = new StringBuilder();
        o.get("pieces").forEach(p -> pieces.append(p.asText()));
        assertEquals(TinyChat.TURN1, pieces.toString(), "the pieces spell the text");
        assertEquals(ids, String.join(" ", o.get("ids").valueStream().map(JsonNode::asText).toList()));
        ProcessContext typing = new ProcessContext(new ByteArrayInputStream(new byte[0]), true, false, () -> {
            throw new IOException("no terminal");
        }, Map.of());
        StringWriter err = new StringWriter();
        int code = Main.execute(typing, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "tokenize", MODEL);
        assertEquals(1, code, "a terminal on standard input is not read as the text");
        assertTrue(err.toString().contains("give --text, --file or --decode, or pipe the text in"), err.toString());
    }
}
