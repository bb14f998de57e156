package dev.edgelm.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GSM8K, zero-shot step by step through the chat template (greedy, thinking off), scored with
 * lm-evaluation-harness's two filters of its {@code gsm8k} task: {@code strict-match} (the number after
 * {@code #### }) and {@code flexible-extract} (the last number in the reply), then {@code exact_match} with its
 * {@code regexes_to_ignore}. Each result is appended to a JSONL file as soon as it is known, so a run that stops
 * resumes where it left off.
 */
public final class Gsm8k {
    private Gsm8k() {}

    /** lm-eval's {@code strict-match} regex. */
    static final Pattern STRICT = Pattern.compile("#### (\\-?[0-9\\.\\,]+)");
    /** lm-eval's {@code flexible-extract} regex, {@code group_select: -1}. */
    static final Pattern FLEXIBLE = Pattern.compile("(-?[$0-9.,]{2,})|(-?[0-9]+)");
    /** What lm-eval's filters return when nothing matches. */
    public static final String INVALID = "[invalid]";

    /** The instruction after the question: step by step, and the answer line strict-match reads. */
    public static final String PROMPT_SUFFIX = "\nLet's think step by step. At the end, write the final answer as a number on its own line, "
            + "in the form \"#### <number>\".";

    public record Problem(int index, String question, String target) {}

    /** One scored problem, as a line of the results file. */
    public record Record(int index, String question, String target, String response, String strict, String flexible,
                         boolean strictCorrect, boolean flexibleCorrect) {}

    public record Interval(double low, double high) {}

    public record Result(int n, int strictCorrect, int flexibleCorrect, Interval strictWilson, Interval flexibleWilson,
                         List<Record> records, int resumed, boolean complete) {
        public double strictAccuracy() {
            return n == 0 ? 0 : (double) strictCorrect / n;
        }

        public double flexibleAccuracy() {
            return n == 0 ? 0 : (double) flexibleCorrect / n;
        }
    }

    /** A problem from its JSON object ({@code question}, {@code answer}); {@code index} is its place in the data. */
    public static Problem problem(JsonNode node, int index, String where) {
        return new Problem(index, Jsonl.text(node, "question", where), Jsonl.text(node, "answer", where));
    }

    public static List<Problem> read(Path file, int limit) {
        List<JsonNode> lines = Jsonl.read(file);
        List<Problem> out = new ArrayList<>();
        for (int i = 0; i < lines.size() && (limit < 0 || out.size() < limit); i++) {
            String where = file + " line " + (i + 1);
            out.add(problem(lines.get(i), i, where));
        }
        if (out.isEmpty()) {
            throw new EdgeLmException(file + ": no problems");
        }
        return out;
    }

    /** {@code strict-match}: the first {@code #### N}, or {@link #INVALID}. */
    public static String strict(String response) {
        Matcher m = STRICT.matcher(response);
        return m.find() ? m.group(1) : INVALID;
    }

    /** {@code flexible-extract}: the last match of the number regex (its non-empty group), or {@link #INVALID}. */
    public static String flexible(String response) {
        Matcher m = FLEXIBLE.matcher(response);
        String last = INVALID;
        while (m.find()) {
            last = m.group(1) != null ? m.group(1) : m.group(2);
        }
        return last;
    }

    /**
     * lm-eval's {@code exact_match} normalisation for gsm8k ({@code ignore_case}, {@code regexes_to_ignore}:
     * {@code ,}, {@code \$}, {@code (?s).*#### }, {@code \.$}), applied to prediction and reference alike.
     */
    public static String normalise(String s) {
        String out = s;
        for (String r : new String[] {",", "\\$", "(?s).*#### ", "\\.$"}) {
            out = out.replaceAll(r, "");
        }
        return out.toLowerCase(java.util.Locale.ROOT).strip();
    }

    public static boolean correct(String extracted, String target) {
        return normalise(extracted).equals(normalise(target));
    }

    /** Asks one problem (the prompt above, through the chat template, greedy, thinking off) and scores the reply. */
    public static Record solve(Engine engine, ChatFormat format, Problem p, int maxTokens) {
        return score(p, Questions.ask(engine, format, p.question() + PROMPT_SUFFIX, maxTokens));
    }

    /** Scores a reply to a problem. */
    public static Record score(Problem p, String response) {
        String s = strict(response);
        String f = flexible(response);
        return new Record(p.index(), p.question(), p.target(), response, s, f, correct(s, p.target()), correct(f, p.target()));
    }

    /** The Wilson score interval at 95 % for {@code k} of {@code n}. */
    public static Interval wilson(int k, int n) {
        if (n == 0) {
            return new Interval(0, 1);
        }
        double z = 1.959963984540054;
        double p = (double) k / n;
        double z2 = z * z;
        double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
        double half = z / (1 + z2 / n) * Math.sqrt(p * (1 - p) / n + z2 / (4.0 * n * n));
        return new Interval(Math.max(0, centre - half), Math.min(1, centre + half));
    }

    /**
     * The finished records of a results file, by problem index. A last line cut short by an interrupted write is
     * ignored (it is redone); a line that is not a record is an error.
     */
    public static Map<Integer, Record> readResults(Path file) {
        Map<Integer, Record> out = new TreeMap<>();
        if (!Files.exists(file)) {
            return out;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read: " + e.getMessage());
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            try {
                Record r = Jsonl.JSON.readValue(line, Record.class);
                out.put(r.index(), r);
            } catch (IOException e) {
                if (i == lines.size() - 1) {
                    break; // the write that was cut short
                }
                throw new EdgeLmException(file + " line " + (i + 1) + ": not a GSM8K result record");
            }
        }
        return out;
    }

    /** Answers the problems not yet in {@code resultsFile}, appending each record as it comes; {@code parallel} sessions. */
    public static Result run(Engine engine, ChatFormat format, List<Problem> problems, Path resultsFile, int parallel, int maxTokens,
                             Progress progress, Stop stop) {
        Map<Integer, Record> done = readResults(resultsFile);
        // a file cut mid-line gets its partial line dropped before appending
        dropPartialLastLine(resultsFile);
        int resumed = 0;
        List<Problem> todo = new ArrayList<>();
        for (Problem p : problems) {
            if (done.containsKey(p.index())) {
                resumed++;
            } else {
                todo.add(p);
            }
        }
        GenerationOptions opts = GenerationOptions.builder().maxNewTokens(maxTokens).build();
        AtomicInteger finished = new AtomicInteger(resumed);
        progress.update(resumed, problems.size(), "problems");
        try (BufferedWriter out = Files.newBufferedWriter(resultsFile, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND); ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, parallel))) {
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < Math.max(1, parallel); w++) {
                workers.add(pool.submit(() -> {
                    int i;
                    while (!stop.requested() && (i = next.getAndIncrement()) < todo.size()) {
                        Problem p = todo.get(i);
                        String reply = Questions.ask(engine, format, p.question() + PROMPT_SUFFIX, opts, stop);
                        if (stop.requested()) {
                            return null; // the cancelled reply is redone next time
                        }
                        Record r = score(p, reply);
                        synchronized (out) {
                            out.write(Jsonl.JSON.writeValueAsString(r));
                            out.write('\n');
                            out.flush();
                            done.put(r.index(), r);
                        }
                        progress.update(finished.incrementAndGet(), problems.size(), "problems");
                    }
                    return null;
                }));
            }
            for (Future<?> f : workers) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    stop.request();
                }
            }
        } catch (IOException e) {
            throw new EdgeLmException(resultsFile + ": cannot write: " + e.getMessage());
        }
        List<Record> records = new ArrayList<>();
        for (Problem p : problems) {
            Record r = done.get(p.index());
            if (r != null) {
                records.add(r);
            }
        }
        records.sort(Comparator.comparingInt(Record::index));
        int s = (int) records.stream().filter(Record::strictCorrect).count();
        int f = (int) records.stream().filter(Record::flexibleCorrect).count();
        return new Result(records.size(), s, f, wilson(s, records.size()), wilson(f, records.size()), records, resumed,
                records.size() == problems.size());
    }

    private static void dropPartialLastLine(Path file) {
        try {
            if (!Files.exists(file) || Files.size(file) == 0) {
                return;
            }
            byte[] all = Files.readAllBytes(file);
            if (all[all.length - 1] == '\n') {
                return;
            }
            int cut = all.length;
            while (cut > 0 && all[cut - 1] != '\n') {
                cut--;
            }
            try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot repair the last line: " + e.getMessage());
        }
    }

    static ObjectNode toJson(Record r) {
        return Jsonl.JSON.valueToTree(r);
    }
}
