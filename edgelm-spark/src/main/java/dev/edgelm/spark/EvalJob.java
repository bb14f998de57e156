package dev.edgelm.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.eval.Gsm8k;
import dev.edgelm.eval.Questions;
import dev.edgelm.util.EdgeLmException;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import dev.edgelm.util.AtomicFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * EdgeLM's {@code questions}, {@code gsm8k} and plain batch generation as a Spark job: the input's rows are
 * numbered in file order, partitions are streamed through one engine per executor ({@link Engines}), and each row
 * becomes the same JSON record the local command computes ({@link Gsm8k#solve}, {@link Questions#ask}). The output
 * is one JSONL file, ordered by row number.
 *
 * <pre>
 *   EvalJob gsm8k     --model M --input test.jsonl        --output out.jsonl [--limit N] [--max-tokens N] [--threads N]
 *   EvalJob questions --model M [--input questions.jsonl] --output out.jsonl [--max-tokens N]
 *   EvalJob generate  --model M --input prompts.jsonl     --output out.jsonl [--max-tokens N]   rows {"prompt": ...}
 * </pre>
 */
public final class EvalJob {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The parsed command line. */
    record Args(String mode, String model, String input, String output, int limit, int maxTokens, int threads) implements Serializable {
        static Args parse(String[] a) {
            if (a.length == 0) {
                throw new EdgeLmException("usage: EvalJob gsm8k|questions|generate --model M --input FILE --output DIR [options]");
            }
            String mode = a[0];
            if (!List.of("gsm8k", "questions", "generate").contains(mode)) {
                throw new EdgeLmException("unknown mode '" + mode + "' (gsm8k, questions, generate)");
            }
            String model = null;
            String input = null;
            String output = null;
            int limit = -1;
            int maxTokens = -1;
            int threads = 0;
            for (int i = 1; i < a.length; i++) {
                String k = a[i];
                if (i + 1 >= a.length) {
                    throw new EdgeLmException(k + " needs a value");
                }
                String v = a[++i];
                switch (k) {
                    case "--model" -> model = v;
                    case "--input" -> input = v;
                    case "--output" -> output = v;
                    case "--limit" -> limit = number(k, v);
                    case "--max-tokens" -> maxTokens = number(k, v);
                    case "--threads" -> threads = number(k, v);
                    default -> throw new EdgeLmException("unknown option " + k);
                }
            }
            if (model == null || output == null || (input == null && !mode.equals("questions"))) {
                throw new EdgeLmException(mode + " needs --model, --output" + (mode.equals("questions") ? "" : " and --input"));
            }
            if (maxTokens < 0) {
                maxTokens = mode.equals("gsm8k") ? 512 : 64;
            }
            return new Args(mode, model, input, output, limit, maxTokens, threads);
        }

        private static int number(String k, String v) {
            try {
                int n = Integer.parseInt(v);
                if (n < 1) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                throw new EdgeLmException(k + " must be a whole number >= 1, got '" + v + "'");
            }
        }
    }

    private EvalJob() {}

    public static void main(String[] argv) {
        Args args;
        try {
            args = Args.parse(argv);
        } catch (EdgeLmException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(1);
            return;
        }
        SparkSession spark = SparkSession.builder().appName("edgelm " + args.mode()).getOrCreate();
        try {
            Summary s = run(spark, args);
            System.out.println(s.text());
        } finally {
            spark.stop();
        }
    }

    /** What the driver prints at the end. */
    public record Summary(long rows, long strictCorrect, long flexibleCorrect, String text) {}

    /**
     * Runs the job; the output is written, the summary returned. The input is read and the output written by the
     * driver with plain Java I/O, not through Hadoop's file systems: on JDK 25 those fail in
     * {@code UserGroupInformation} ({@code Subject.getSubject} is no longer supported), and the files are small
     * (text in, text out) next to the generation the executors do.
     */
    public static Summary run(SparkSession spark, Args args) {
        List<Tuple2<String, Long>> rows = numberedRows(args);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int slices = Math.max(1, Math.min(rows.size(), jsc.defaultParallelism()));
        List<Tuple2<Long, String>> records = new ArrayList<>(jsc.parallelize(rows, slices).mapPartitions(new Worker(args)).collect());
        records.sort(java.util.Comparator.comparingLong(Tuple2::_1));
        Path output = Path.of(args.output());
        try {
            if (output.toAbsolutePath().getParent() != null) {
                Files.createDirectories(output.toAbsolutePath().getParent());
            }
            AtomicFiles.write(output, out -> {
                for (Tuple2<Long, String> r : records) {
                    out.write((r._2() + "\n").getBytes(StandardCharsets.UTF_8));
                }
            });
        } catch (IOException e) {
            throw new EdgeLmException(output + ": cannot write: " + e.getMessage());
        }
        long n = records.size();
        if (!args.mode().equals("gsm8k")) {
            long right = args.mode().equals("questions") ? records.stream().filter(r -> field(r._2(), "correct")).count() : 0;
            return new Summary(n, right, right, args.mode().equals("questions") ? right + "/" + n + " right" : n + " answers written to " + output);
        }
        long strict = records.stream().filter(r -> field(r._2(), "strictCorrect")).count();
        long flexible = records.stream().filter(r -> field(r._2(), "flexibleCorrect")).count();
        Gsm8k.Interval ws = Gsm8k.wilson((int) strict, (int) n);
        Gsm8k.Interval wf = Gsm8k.wilson((int) flexible, (int) n);
        return new Summary(n, strict, flexible, String.format(Locale.ROOT,
                "strict-match %d/%d (Wilson 95%% %.2f%% - %.2f%%), flexible-extract %d/%d (Wilson 95%% %.2f%% - %.2f%%)",
                strict, n, 100 * ws.low(), 100 * ws.high(), flexible, n, 100 * wf.low(), 100 * wf.high()));
    }

    private static boolean field(String json, String name) {
        try {
            return JSON.readTree(json).path(name).asBoolean();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The input's rows as JSON text, numbered in file order (blank lines skipped, as the local commands read). */
    static List<Tuple2<String, Long>> numberedRows(Args args) {
        List<String> lines = new ArrayList<>();
        if (args.mode().equals("questions") && args.input() == null) {
            for (Questions.Question q : Questions.defaults()) {
                lines.add(JSON.createObjectNode().put("question", q.question()).put("answer", q.expected().pattern()).toString());
            }
        } else {
            Path in = Path.of(args.input());
            try {
                for (String l : Files.readAllLines(in, StandardCharsets.UTF_8)) {
                    if (!l.isBlank()) {
                        lines.add(l);
                    }
                }
            } catch (IOException e) {
                throw new EdgeLmException("--input " + in + ": cannot read: " + e.getMessage());
            }
        }
        List<Tuple2<String, Long>> out = new ArrayList<>();
        for (int i = 0; i < lines.size() && (args.limit() < 0 || i < args.limit()); i++) {
            out.add(new Tuple2<>(lines.get(i), (long) i));
        }
        if (out.isEmpty()) {
            throw new EdgeLmException("no input rows");
        }
        return out;
    }

    /** One partition through the executor's engine: each row to its output record. */
    static final class Worker implements org.apache.spark.api.java.function.FlatMapFunction<Iterator<Tuple2<String, Long>>, Tuple2<Long, String>> {
        private final Args args;

        Worker(Args args) {
            this.args = args;
        }

        @Override
        public Iterator<Tuple2<Long, String>> call(Iterator<Tuple2<String, Long>> rows) throws Exception {
            Engines.Loaded e = Engines.get(args.model(), args.threads());
            List<Tuple2<Long, String>> out = new ArrayList<>();
            while (rows.hasNext()) {
                Tuple2<String, Long> row = rows.next();
                int index = (int) (long) row._2();
                JsonNode node = JSON.readTree(row._1());
                String where = (args.input() == null ? "question" : args.input()) + " row " + (index + 1);
                String record = switch (args.mode()) {
                    case "gsm8k" -> JSON.writeValueAsString(Gsm8k.solve(e.engine(), e.format(), Gsm8k.problem(node, index, where), args.maxTokens()));
                    case "questions" -> questionRecord(e, node, index, where);
                    default -> generateRecord(e, node, index, where);
                };
                out.add(new Tuple2<>((long) index, record));
            }
            return out.iterator();
        }

        private String questionRecord(Engines.Loaded e, JsonNode node, int index, String where) throws Exception {
            String q = text(node, "question", where);
            Pattern p = Pattern.compile(text(node, "answer", where), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
            String a = Questions.ask(e.engine(), e.format(), q, args.maxTokens());
            Questions.Answer answer = new Questions.Answer(index + 1, q, p.pattern(), a, Questions.matches(new Questions.Question(q, p), a));
            return JSON.writeValueAsString(answer);
        }

        private String generateRecord(Engines.Loaded e, JsonNode node, int index, String where) throws Exception {
            String prompt = text(node, "prompt", where);
            ObjectNode o = JSON.createObjectNode();
            o.put("index", index);
            if (node.has("id")) {
                o.set("id", node.get("id"));
            }
            o.put("prompt", prompt);
            o.put("answer", Questions.ask(e.engine(), e.format(), prompt, args.maxTokens()));
            return o.toString();
        }

        private static String text(JsonNode node, String field, String where) {
            JsonNode v = node.get(field);
            if (v == null || !v.isTextual()) {
                throw new EdgeLmException(where + ": field \"" + field + "\" (a string) is missing");
            }
            return v.asText();
        }
    }
}
