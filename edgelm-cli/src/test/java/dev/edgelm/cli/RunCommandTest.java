package dev.edgelm.cli;

import static dev.edgelm.chat.TinyChat.replyIds;
import static dev.edgelm.chat.TinyChat.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.chat.TinyChat;
import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code edgelm run} in one-shot mode on tiny-chat: the goldens, piped input, models it cannot chat with. */
class RunCommandTest {
    static final String MODEL = TinyChat.DIR.toString();

    static CliRunner run(byte[] stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(ProcessContext.piped(stdin), new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRunner(code, out.toString(), err.toString());
    }

    /** The greedy reply to one user message, straight from a session: the reference for the command's output. */
    static String greedyReply(String user) {
        return greedyReply(null, user);
    }

    /** As {@link #greedyReply(String)}, after tiny-chat's system prompt. */
    static String greedyReplyWithSystem(String user) {
        return greedyReply(TinyChat.SYSTEM, user);
    }

    static String greedyReply(String system, String user) {
        List<Map<String, Object>> messages = new java.util.ArrayList<>();
        if (system != null) {
            messages.add(Map.of("role", "system", "content", system));
        }
        messages.add(Map.of("role", "user", "content", user));
        ChatFormat format = ChatFormat.load(TinyChat.DIR);
        try (Engine engine = Engine.load(TinyChat.DIR, EngineOptions.defaults().withThreads(1))) {
            Session s = engine.newSession();
            s.prefill(format.encodePrompt(messages, null, true,
                    Map.of("enable_thinking", false)));
            int[] ids = s.generate(GenerationOptions.builder().maxNewTokens(24).stopTokenIds(format.stopTokenIds()).build()).tokens();
            return format.tokenizer().decode(ids, true);
        }
    }

    @Test
    void answersThePromptWithTheGoldenReply() {
        CliRunner r = CliRunner.run("run", MODEL, "--system", TinyChat.SYSTEM, "--prompt", TinyChat.TURN1,
                "--max-tokens", "24", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(text("turn1_reply") + "\n", r.out(), "stops at <|im_end|>, which is not printed");
        assertEquals(8, replyIds("turn1").length);
    }

    @Test
    void thinkingGoesToStandardErrorFramedWithWordsAndWithoutEscapeCodes() {
        // tiny-chat's thinking reply never closes its think block: all of it is thinking, none of it answer
        CliRunner r = CliRunner.run("run", MODEL, "--think", "--prompt", TinyChat.THINK, "--max-tokens", "16", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("\n", r.out(), "standard output holds the answer only (here: none)");
        assertTrue(r.err().contains("Thinking...\n" + text("think_reply") + "\n...done thinking.\n"), r.err());
        assertTrue(!r.err().contains("\033"), "no ANSI codes off a terminal");

        CliRunner hidden = CliRunner.run("run", MODEL, "--think", "--hide-thinking", "--prompt", TinyChat.THINK,
                "--max-tokens", "16", "--threads", "1");
        assertEquals(0, hidden.exitCode(), hidden.err());
        assertEquals("\n", hidden.out());
        assertTrue(!hidden.err().contains(text("think_reply")) && !hidden.err().contains("Thinking"), hidden.err());
    }

    @Test
    void runsAGgufFileWithItsOwnTokenizer(@TempDir Path dir) {
        Path gguf = dir.resolve("tiny-chat.gguf");
        GgufConverter.convert(TinyChat.DIR, gguf, QuantRecipe.BF16, w -> { }, null);
        CliRunner r = CliRunner.run("run", gguf.toString(), "--system", TinyChat.SYSTEM, "--prompt", TinyChat.TURN1,
                "--max-tokens", "24", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(text("turn1_reply") + "\n", r.out());
    }

    @Test
    void pipedTextIsAppendedToThePromptOrIsThePrompt() {
        byte[] notes = "Paris is in France.\nBerlin is in Germany.\n".getBytes(StandardCharsets.UTF_8);
        CliRunner appended = run(notes, "run", MODEL, "--prompt", "Summarize", "--max-tokens", "24", "--threads", "1");
        assertEquals(0, appended.exitCode(), appended.err());
        assertEquals(greedyReply("Summarize\n\nParis is in France.\nBerlin is in Germany.\n") + "\n", appended.out());

        CliRunner alone = run(notes, "run", MODEL, "--max-tokens", "24", "--threads", "1");
        assertEquals(0, alone.exitCode(), alone.err());
        assertEquals(greedyReply("Paris is in France.\nBerlin is in Germany.\n") + "\n", alone.out());

        CliRunner empty = run(new byte[0], "run", MODEL, "--prompt", "Summarize", "--max-tokens", "24", "--threads", "1");
        assertEquals(greedyReply("Summarize") + "\n", empty.out(), "empty input adds nothing");
    }

    @Test
    void aModelWithoutTokenizerPointsToScore() {
        CliRunner r = CliRunner.run("run", "src/test/resources/fixtures/qwen35/tiny-a", "--prompt", "hi");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().startsWith("error: ") && r.err().contains("has no tokenizer") && r.err().contains("edgelm score"), r.err());
    }

    @Test
    void withoutPromptOrTerminalThereIsNothingToAnswer() {
        CliRunner r = CliRunner.run("run", MODEL);
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("give a prompt (edgelm run MODEL \"question\", or -p), pipe text in, or run on a terminal"), r.err());
    }

    @Test
    void aTurnThatDoesNotFitSaysHowManyTokensItNeeds() {
        CliRunner r = CliRunner.run("run", MODEL, "--prompt", TinyChat.TURN1, "--max-tokens", "24", "--max-num-tokens", "40");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("needs") && r.err().contains("holds 40"), r.err());
    }
}
