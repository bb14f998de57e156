package dev.edgelm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.cli.Main;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.eval.Questions;
import dev.edgelm.template.ChatFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Spark job in local mode on the tiny chat model: its output equals the local command's on the same input. */
class EvalJobTest {
    static final String ROOT = "../src/test/resources/fixtures/";
    static final String MODEL = ROOT + "qwen35/tiny-chat";
    static final ObjectMapper JSON = new ObjectMapper();
    static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("edgelm-test").config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2").getOrCreate();
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    static List<JsonNode> lines(Path dirOrFile) throws IOException {
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(dirOrFile)) {
            try (Stream<Path> s = Files.list(dirOrFile)) {
                s.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().forEach(files::add);
            }
        } else {
            files.add(dirOrFile);
        }
        List<JsonNode> out = new ArrayList<>();
        for (Path f : files) {
            for (String l : Files.readAllLines(f)) {
                if (!l.isBlank()) {
                    out.add(JSON.readTree(l));
                }
            }
        }
        return out;
    }

    @Test
    void gsm8kEqualsTheLocalCommand(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("local.jsonl");
        int code = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), "eval", "gsm8k", MODEL,
                "--data", ROOT + "eval/gsm8k-mini.jsonl", "--max-tokens", "6", "--threads", "1", "--results", local.toString());
        assertEquals(0, code);
        EvalJob.Summary s = EvalJob.run(spark, EvalJob.Args.parse(new String[] {"gsm8k", "--model", MODEL, "--input",
                ROOT + "eval/gsm8k-mini.jsonl", "--output", dir.resolve("spark.jsonl").toString(), "--max-tokens", "6", "--threads", "1"}));
        assertEquals(3, s.rows());
        List<JsonNode> expected = lines(local);
        expected.sort(java.util.Comparator.comparingInt(n -> n.get("index").asInt()));
        assertEquals(expected, lines(dir.resolve("spark.jsonl")));
    }

    @Test
    void questionsAndGenerationEqualTheLocalAnswers(@TempDir Path dir) throws Exception {
        EvalJob.Summary s = EvalJob.run(spark, EvalJob.Args.parse(new String[] {"questions", "--model", MODEL, "--output",
                dir.resolve("q.jsonl").toString(), "--max-tokens", "5", "--threads", "1"}));
        assertEquals(8, s.rows());
        Path prompts = dir.resolve("prompts.jsonl");
        Files.writeString(prompts, "{\"id\": \"a\", \"prompt\": \"Hi\"}\n\n{\"id\": \"b\", \"prompt\": \"What is 2 + 2?\"}\n");
        EvalJob.run(spark, EvalJob.Args.parse(new String[] {"generate", "--model", MODEL, "--input", prompts.toString(), "--output",
                dir.resolve("g.jsonl").toString(), "--max-tokens", "5", "--threads", "1"}));
        List<String> generated = lines(dir.resolve("g.jsonl")).stream().map(n -> n.get("answer").asText()).toList();
        assertEquals(List.of("a", "b"), lines(dir.resolve("g.jsonl")).stream().map(n -> n.get("id").asText()).toList());
        try (Engine engine = Engine.load(Path.of(MODEL), EngineOptions.defaults().withThreads(1))) {
            ChatFormat format = ChatFormat.load(Path.of(MODEL));
            Questions.Result local = Questions.run(engine, format, Questions.defaults(), false, 5, dev.edgelm.eval.Progress.NONE,
                    dev.edgelm.eval.Stop.never());
            List<JsonNode> spark = lines(dir.resolve("q.jsonl"));
            for (int i = 0; i < 8; i++) {
                assertEquals(local.answers().get(i).answer(), spark.get(i).get("answer").asText());
                assertEquals(local.answers().get(i).correct(), spark.get(i).get("correct").asBoolean());
            }
            assertEquals(List.of(Questions.ask(engine, format, "Hi", 5), Questions.ask(engine, format, "What is 2 + 2?", 5)), generated);
        }
        assertTrue(s.text().endsWith("/8 right"), s.text());
    }
}
