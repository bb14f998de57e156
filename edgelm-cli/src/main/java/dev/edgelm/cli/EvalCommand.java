package dev.edgelm.cli;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.eval.EvalTables;
import dev.edgelm.eval.Gsm8k;
import dev.edgelm.eval.KlDivergence;
import dev.edgelm.eval.LogitsFile;
import dev.edgelm.eval.MultiTurn;
import dev.edgelm.eval.Parity;
import dev.edgelm.eval.Perplexity;
import dev.edgelm.eval.Progress;
import dev.edgelm.eval.Questions;
import dev.edgelm.eval.ScoringModel;
import dev.edgelm.eval.Stop;
import dev.edgelm.eval.Sweep;
import dev.edgelm.eval.SweepPlan;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code edgelm eval}: the correctness gates as commands (see docs/eval.md). */
@Command(name = "eval", mixinStandardHelpOptions = true,
        description = "Correctness gates: perplexity and KL divergence (llama-perplexity's method and file), logit parity, "
                + "prompt-length sweep, multi-turn state reuse, short questions, GSM8K. Each exits 1 when its gate fails.",
        subcommands = {EvalCommand.PerplexityCmd.class, EvalCommand.KldCmd.class, EvalCommand.ParityCmd.class,
                EvalCommand.SweepCmd.class, EvalCommand.MultiTurnCmd.class, EvalCommand.QuestionsCmd.class,
                EvalCommand.Gsm8kCmd.class})
final class EvalCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Options every gate has. */
    static final class Common {
        @Option(names = "--threads", paramLabel = "N", description = "Worker threads (default: physical cores).")
        Integer threads;

        @Option(names = "--report", paramLabel = "DIR", description = "Also write report.md, report.json and PNG charts into DIR.")
        Path report;

        int threads() {
            if (threads != null && threads < 1) {
                throw new EdgeLmException("--threads must be >= 1, got " + threads);
            }
            return threads != null ? threads : Parallel.physicalCores();
        }

        Engine engine(Path model) {
            return Engine.load(existing(model, "MODEL"), EngineOptions.defaults().withThreads(threads()));
        }

        ScoringModel scoring(Path model) {
            return ScoringModel.open(existing(model, "MODEL"), threads());
        }

        void write(EvalReport r) {
            if (report != null) {
                r.write(report);
            }
        }
    }

    /** The base of every gate: output, progress, Ctrl+C. */
    abstract static class Gate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ParentCommand
        EvalCommand eval;

        @Mixin
        Common common;

        PrintWriter out() {
            return spec.commandLine().getOut();
        }

        Progress progress() {
            return EvalProgress.of(eval.main.context);
        }

        /**
         * Runs {@code body} with a {@link Stop} that Ctrl+C requests: the gate finishes its current unit, reports
         * what it finished and exits (the shutdown waits a bounded time for that).
         */
        static int stoppable(Function<Stop, Integer> body) {
            Stop stop = new Stop();
            CountDownLatch finished = new CountDownLatch(1);
            Thread hook = new Thread(() -> {
                stop.request();
                try {
                    finished.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "eval-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                return body.apply(stop);
            } finally {
                finished.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // Ctrl+C: the hook is running and lets the JVM go now
                }
            }
        }

        static int gate(PrintWriter out, boolean pass, String what) {
            out.println((pass ? "PASS: " : "FAIL: ") + what);
            out.flush();
            return pass ? 0 : 1;
        }
    }

    static Path existing(Path p, String what) {
        if (!Files.exists(p)) {
            throw new EdgeLmException(what + " " + p + ": no such file or folder");
        }
        return p;
    }

    static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    @Command(name = "perplexity", mixinStandardHelpOptions = true,
            description = "Perplexity of a text as llama-perplexity computes it (chunks of --ctx tokens, each scored on its "
                    + "second half); --kl-divergence-base also writes llama.cpp's KL-divergence base file.")
    static final class PerplexityCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "A .gguf file or a checkpoint folder.")
        Path model;

        @Option(names = {"-f", "--file"}, required = true, paramLabel = "TEXT", description = "The text (UTF-8).")
        Path file;

        @Option(names = {"-c", "--ctx"}, paramLabel = "N", defaultValue = "512", description = "Tokens per chunk (default ${DEFAULT-VALUE}, as llama-perplexity).")
        int ctx;

        @Option(names = "--chunks", paramLabel = "K", defaultValue = "-1", description = "At most K chunks (default: all).")
        int chunks;

        @Option(names = "--kl-divergence-base", paramLabel = "FILE", description = "Write the base model's log-probabilities here.")
        Path base;

        @Option(names = "--max-ppl", paramLabel = "X", description = "Gate: fail when the perplexity is above X.")
        Double maxPpl;

        @Override
        public Integer call() {
            String text;
            try {
                text = Files.readString(existing(file, "--file"));
            } catch (IOException e) {
                throw new EdgeLmException("--file " + file + ": cannot read: " + e.getMessage());
            }
            try (ScoringModel m = common.scoring(model)) {
                int[] tokens = m.tokenizeText(text, "--file " + file);
                int nChunk = Perplexity.chunkCount(tokens.length, ctx, chunks);
                out().println(f("perplexity: %d tokens, %d chunks of %d, %d scored per chunk", tokens.length, nChunk, ctx,
                        LogitsFile.scoredPerChunk(ctx)));
                out().flush();
                return stoppable(stop -> {
                    Perplexity.Result r;
                    LogitsFile.Writer w = base == null ? null : new LogitsFile.Writer(base,
                            new LogitsFile.Header(ctx, m.vocabSize(), nChunk, java.util.Arrays.copyOf(tokens, nChunk * ctx)));
                    try {
                        r = Perplexity.run(m, tokens, ctx, chunks, w, progress(), stop);
                        if (w != null && r.complete()) {
                            w.commit();
                            out().println("wrote " + base);
                        }
                    } finally {
                        if (w != null) {
                            w.close();
                        }
                    }
                    out().print(EvalTables.perplexity(r));
                    if (!r.complete()) {
                        out().println("stopped after " + r.chunks() + " of " + nChunk + " chunks" + (base != null ? " (no base file written)" : ""));
                    }
                    EvalReport rep = new EvalReport("perplexity").put("model", model.toString()).put("result", r)
                            .block(EvalTables.perplexity(r));
                    double[] x = new double[r.chunks()];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = i + 1;
                    }
                    if (x.length > 0) {
                        rep.line("perplexity.png", "Running perplexity", "chunk", "PPL", x, Map.of("PPL", r.runningPpl()));
                    }
                    common.write(rep);
                    if (!r.complete()) {
                        return 1;
                    }
                    return maxPpl == null ? 0 : gate(out(), r.ppl() <= maxPpl, f("PPL %.4f <= %.4f", r.ppl(), maxPpl));
                });
            }
        }
    }

    @Command(name = "kld", mixinStandardHelpOptions = true,
            description = "KL divergence of MODEL against a base file written by llama-perplexity or by 'edgelm eval perplexity', "
                    + "with llama-perplexity's statistics.")
    static final class KldCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "The model under test: a .gguf file or a checkpoint folder.")
        Path model;

        @Option(names = "--kl-divergence-base", required = true, paramLabel = "FILE", description = "The base file.")
        Path base;

        @Option(names = "--max-kld", paramLabel = "X", description = "Gate: fail when the mean KLD is above X.")
        Double maxKld;

        @Option(names = "--min-same-top", paramLabel = "P", description = "Gate: fail when 'same top p' is below P (0..1).")
        Double minSameTop;

        @Override
        public Integer call() {
            try (LogitsFile.Reader reader = new LogitsFile.Reader(existing(base, "--kl-divergence-base"));
                 ScoringModel m = common.scoring(model)) {
                LogitsFile.Header h = reader.header();
                out().println(f("kl_divergence: %d chunks, n_ctx=%d, n_vocab=%d", h.nChunk(), h.nCtx(), h.nVocab()));
                out().flush();
                return stoppable(stop -> {
                    KlDivergence.Result r = KlDivergence.run(m, reader, progress(), stop);
                    String table = EvalTables.kld(r);
                    out().print(table);
                    Map<String, Object> json = new LinkedHashMap<>();
                    json.put("chunks", r.chunks());
                    json.put("rows", r.rows());
                    json.put("statistics", r.statistics());
                    EvalReport rep = new EvalReport("kld").put("model", model.toString()).put("base", base.toString()).put("result", json).block(table);
                    if (r.kldValues().length > 0) {
                        float[] sorted = r.kldValues().clone();
                        java.util.Arrays.sort(sorted);
                        double[] x = new double[sorted.length];
                        double[] y = new double[sorted.length];
                        for (int i = 0; i < sorted.length; i++) {
                            x[i] = 100.0 * i / Math.max(1, sorted.length - 1);
                            y[i] = sorted[i];
                        }
                        rep.line("kld-percentiles.png", "KL divergence per token, sorted", "percentile", "KLD (nats)", x, Map.of("KLD", y));
                        double[] cx = new double[r.rows().size()];
                        double[] cy = new double[cx.length];
                        double[] top = new double[cx.length];
                        for (int i = 0; i < cx.length; i++) {
                            cx[i] = i + 1;
                            cy[i] = r.rows().get(i).kld().value();
                            top[i] = r.rows().get(i).sameTop().value();
                        }
                        rep.line("kld-chunks.png", "Running mean KLD and same top p", "chunk", "value", cx,
                                Map.of("mean KLD", cy, "same top p", top));
                    }
                    common.write(rep);
                    if (!r.complete()) {
                        out().println("stopped after " + r.chunks() + " of " + h.nChunk() + " chunks");
                        return 1;
                    }
                    boolean pass = true;
                    List<String> what = new ArrayList<>();
                    if (maxKld != null && r.statistics() != null) {
                        pass &= r.statistics().meanKld().value() <= maxKld;
                        what.add(f("mean KLD %.6f <= %.6f", r.statistics().meanKld().value(), maxKld));
                    }
                    if (minSameTop != null && r.statistics() != null) {
                        pass &= r.statistics().sameTop().value() >= minSameTop;
                        what.add(f("same top p %.4f >= %.4f", r.statistics().sameTop().value(), minSameTop));
                    }
                    return what.isEmpty() ? 0 : gate(out(), pass, String.join(", ", what));
                });
            }
        }
    }

    @Command(name = "parity", mixinStandardHelpOptions = true,
            description = "Logit parity of MODEL against reference logits (.npy [T, vocab], e.g. from PyTorch) or another model, "
                    + "teacher-forced on the same tokens: top-1 / top-5 agreement, Pearson, KL, max abs difference.")
    static final class ParityCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "The model under test.")
        Path model;

        @Option(names = "--reference", paramLabel = "LOGITS.npy", description = "Reference logits [T, vocab] float32.")
        Path reference;

        @Option(names = "--against", paramLabel = "OTHER_MODEL", description = "Or: the reference model, run here.")
        Path against;

        @Option(names = "--tokens", required = true, paramLabel = "IDS", description = "Token ids: 1,2,3 or @file.")
        String tokens;

        @Option(names = "--min-top1", paramLabel = "P", defaultValue = "0.95", description = "Gate: top-1 agreement at least P (default ${DEFAULT-VALUE}).")
        double minTop1;

        @Option(names = "--min-pearson", paramLabel = "R", defaultValue = "0.99", description = "Gate: overall Pearson at least R (default ${DEFAULT-VALUE}).")
        double minPearson;

        @Option(names = "--max-kl", paramLabel = "X", description = "Gate: mean KL at most X.")
        Double maxKl;

        @Override
        public Integer call() {
            if ((reference == null) == (against == null)) {
                throw new EdgeLmException("give exactly one of --reference LOGITS.npy and --against OTHER_MODEL");
            }
            int[] ids = TokenIds.parse(tokens, "--tokens");
            float[] ref;
            int vocab;
            try (ScoringModel m = common.scoring(model)) {
                vocab = m.vocabSize();
                float[] test = m.model().prefill(m.model().newState(ids.length), ids, ChunkPlan.defaultPlan(), true);
                if (reference != null) {
                    Npy.Array a = Npy.read(existing(reference, "--reference"));
                    if (a.shape().length != 2 || a.dim(0) != ids.length || a.dim(1) != vocab || a.floats() == null) {
                        throw new EdgeLmException("--reference " + reference + ": expected float logits [" + ids.length + ", " + vocab
                                + "], got shape " + java.util.Arrays.toString(a.shape()));
                    }
                    ref = a.floats();
                } else {
                    try (ScoringModel o = common.scoring(against)) {
                        if (o.vocabSize() != vocab) {
                            throw new EdgeLmException("--against " + against + ": vocabulary of " + o.vocabSize() + ", MODEL has " + vocab);
                        }
                        ref = o.model().prefill(o.model().newState(ids.length), ids, ChunkPlan.defaultPlan(), true);
                    }
                }
                Parity.Result r = Parity.compare(ref, test, ids.length, vocab);
                StringBuilder t = new StringBuilder(f("%8s %8s %8s %6s %10s %12s %12s%n", "position", "ref top", "top", "top-5", "Pearson", "KL", "max |diff|"));
                for (Parity.Position p : r.positions()) {
                    t.append(f("%8d %8d %8d %6.2f %10.6f %12.4e %12.4e%n", p.position(), p.refTop(), p.top(), p.top5(), p.pearson(), p.kl(), p.maxAbsDiff()));
                }
                t.append(f("%nall %d positions: top-1 %.4f  top-5 %.4f  Pearson %.6f  KL mean %.4e max %.4e  max |diff| %.4e%n",
                        ids.length, r.top1(), r.top5(), r.pearson(), r.meanKl(), r.maxKl(), r.maxAbsDiff()));
                out().print(t);
                EvalReport rep = new EvalReport("parity").put("model", model.toString()).put("result", r).block(t.toString());
                double[] x = new double[ids.length];
                double[] kl = new double[ids.length];
                double[] pe = new double[ids.length];
                for (int i = 0; i < x.length; i++) {
                    x[i] = i;
                    kl[i] = r.positions().get(i).kl();
                    pe[i] = r.positions().get(i).pearson();
                }
                rep.line("parity.png", "Per-position parity", "position", "value", x, Map.of("KL", kl, "Pearson", pe));
                common.write(rep);
                boolean pass = r.top1() >= minTop1 && r.pearson() >= minPearson && (maxKl == null || r.meanKl() <= maxKl);
                return gate(out(), pass, f("top-1 %.4f >= %.4f, Pearson %.6f >= %.6f%s", r.top1(), minTop1, r.pearson(), minPearson,
                        maxKl == null ? "" : f(", KL %.4e <= %.4e", r.meanKl(), maxKl)));
            }
        }
    }

    @Command(name = "sweep", mixinStandardHelpOptions = true,
            description = "Prompt-length sweep: every length prefilled under every chunk plan into a fresh state; the first "
                    + "generated token and the logits must match the one-shot prefill.")
    static final class SweepCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "A .gguf file or a checkpoint folder.")
        Path model;

        @Option(names = "--lengths", paramLabel = "RANGES", defaultValue = "1-80", description = "Prompt lengths, e.g. 1-80 or 1-8,16,32 (default ${DEFAULT-VALUE}).")
        String lengths;

        @Option(names = "--plans", paramLabel = "PLANS", split = ",",
                description = "oneshot, ladder (1024/512/.../1), reduced (1024/256/64/16/4/1), fixed:N, random:SEED (default: "
                        + "oneshot,ladder,reduced,fixed:1,fixed:3,fixed:16,random:1,random:2).")
        List<String> plans;

        @Option(names = "--tolerance", paramLabel = "X", defaultValue = "1e-3", description = "Largest logit difference allowed (default ${DEFAULT-VALUE}).")
        double tolerance;

        @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Seed of the prompt's token ids (default ${DEFAULT-VALUE}).")
        long seed;

        @Override
        public Integer call() {
            List<Integer> ls = Sweep.parseLengths(lengths);
            List<SweepPlan> ps = plans == null ? SweepPlan.defaults() : plans.stream().map(SweepPlan::parse).toList();
            try (ScoringModel m = common.scoring(model)) {
                int max = ls.stream().mapToInt(Integer::intValue).max().orElseThrow();
                int[] prompt = Sweep.prompt(m.vocabSize(), max, seed);
                return stoppable(stop -> {
                    Sweep.Result r = Sweep.run(m.model(), prompt, ls, ps, tolerance, progress(), stop);
                    StringBuilder t = new StringBuilder(f("%-12s %8s %14s%n", "plan", "clean", "max |diff|"));
                    List<String> failures = new ArrayList<>();
                    for (SweepPlan p : ps) {
                        double worst = r.rows().stream().flatMap(List::stream).filter(c -> c.plan().equals(p.name()))
                                .mapToDouble(Sweep.Cell::maxAbsDiff).max().orElse(0);
                        t.append(f("%-12s %4d/%-3d %14.3e%n", p.name(), r.cleanCells(p.name()), r.lengths().size(), worst));
                    }
                    for (List<Sweep.Cell> row : r.rows()) {
                        for (Sweep.Cell c : row) {
                            if (!c.clean()) {
                                failures.add(f("length %d, %s %s: token %d (one shot %d), max |diff| %.3e", c.length(), c.plan(),
                                        java.util.Arrays.toString(c.sizes()), c.token(), c.oneShotToken(), c.maxAbsDiff()));
                            }
                        }
                    }
                    t.append(f("%n%d/%d lengths clean under every plan (tolerance %.1e)%n", r.cleanLengths(), ls.size(), tolerance));
                    failures.forEach(x -> t.append("  ").append(x).append('\n'));
                    out().print(t);
                    List<Number[]> cells = new ArrayList<>();
                    for (int i = 0; i < r.rows().size(); i++) {
                        for (int j = 0; j < ps.size(); j++) {
                            cells.add(new Number[] {i, j, r.rows().get(i).get(j).clean() ? 1 : 0});
                        }
                    }
                    EvalReport rep = new EvalReport("sweep").put("model", model.toString()).put("tolerance", tolerance)
                            .put("lengths", r.lengths()).put("cleanLengths", r.cleanLengths()).put("cells", r.rows()).block(t.toString());
                    if (!cells.isEmpty()) {
                        rep.grid("sweep.png", "Prompt-length sweep (green: clean)", r.lengths(), ps.stream().map(SweepPlan::name).toList(), cells);
                    }
                    common.write(rep);
                    return gate(out(), r.complete() && r.cleanLengths() == ls.size(), f("%d/%d lengths clean", r.cleanLengths(), ls.size()));
                });
            }
        }
    }

    @Command(name = "multiturn", mixinStandardHelpOptions = true,
            description = "Multi-turn state reuse: each turn generated on the reused state must equal the same turn rendered "
                    + "and prefilled from scratch (tokens identical, logits within --tolerance).")
    static final class MultiTurnCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "A chat model: .gguf file or checkpoint folder.")
        Path model;

        @Option(names = "--conversations", required = true, paramLabel = "FILE.jsonl",
                description = "One conversation per line: {\"system\": ..., \"thinking\": false, \"max_tokens\": 16, \"turns\": [...]}.")
        Path conversations;

        @Option(names = "--tolerance", paramLabel = "X", defaultValue = "1e-4", description = "Largest logit difference allowed (default ${DEFAULT-VALUE}).")
        double tolerance;

        @Override
        public Integer call() {
            List<MultiTurn.Script> scripts = MultiTurn.read(existing(conversations, "--conversations"));
            ChatFormat format = ChatFormat.load(existing(model, "MODEL"));
            try (Engine engine = common.engine(model)) {
                return stoppable(stop -> {
                    MultiTurn.Result r = MultiTurn.run(engine, format, scripts, tolerance, progress(), stop);
                    StringBuilder t = new StringBuilder(f("%-20s %4s %7s %7s %9s %7s %8s %12s%n", "conversation", "turn", "prompt", "reused",
                            "rollback", "tokens", "equal", "max |diff|"));
                    for (MultiTurn.Turn x : r.turns()) {
                        t.append(f("%-20s %4d %7d %7d %9s %7d %8s %12.3e%n", x.conversation(), x.turn(), x.promptTokens(), x.reusedTokens(),
                                x.rolledBack() ? "yes" : "no", x.reuseTokens().length, x.tokensEqual() ? "yes" : "NO", x.maxAbsDiff()));
                    }
                    t.append(f("%n%d/%d turns clean (tolerance %.1e)%n", r.clean(), r.turns().size(), tolerance));
                    out().print(t);
                    EvalReport rep = new EvalReport("multiturn").put("model", model.toString()).put("result", r).block(t.toString());
                    List<String> names = new ArrayList<>();
                    List<Double> diffs = new ArrayList<>();
                    for (MultiTurn.Turn x : r.turns()) {
                        names.add(x.conversation() + " #" + x.turn());
                        diffs.add(x.maxAbsDiff());
                    }
                    if (!names.isEmpty()) {
                        rep.bars("multiturn.png", "Reused state vs from scratch: max |logit diff| per turn", "max |diff|", names,
                                Map.of("max |diff|", diffs));
                    }
                    common.write(rep);
                    return gate(out(), r.complete() && r.clean() == r.turns().size(), f("%d/%d turns clean", r.clean(), r.turns().size()));
                });
            }
        }
    }

    @Command(name = "questions", mixinStandardHelpOptions = true,
            description = "Short questions with an expected answer pattern, greedy, thinking off (8 built in); --composite asks "
                    + "them all in one prompt and scores each answer.")
    static final class QuestionsCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "A chat model: .gguf file or checkpoint folder.")
        Path model;

        @Option(names = "--file", paramLabel = "QUESTIONS.jsonl", description = "{\"question\": ..., \"answer\": REGEX} per line (default: the 8 built in).")
        Path file;

        @Option(names = "--composite", description = "All questions in one prompt, answers numbered.")
        boolean composite;

        @Option(names = "--max-tokens", paramLabel = "N", description = "Tokens per answer (default 64; composite: 48 per question).")
        Integer maxTokens;

        @Option(names = "--min-correct", paramLabel = "N", description = "Gate: at least N right (default: all).")
        Integer minCorrect;

        @Override
        public Integer call() {
            List<Questions.Question> qs = file == null ? Questions.defaults() : Questions.read(existing(file, "--file"));
            ChatFormat format = ChatFormat.load(existing(model, "MODEL"));
            int max = maxTokens != null ? maxTokens : composite ? 48 * qs.size() : 64;
            try (Engine engine = common.engine(model)) {
                return stoppable(stop -> {
                    Questions.Result r = Questions.run(engine, format, qs, composite, max, progress(), stop);
                    StringBuilder t = new StringBuilder(f("%3s %-6s %-50s %s%n", "#", "right", "question", "answer"));
                    for (Questions.Answer a : r.answers()) {
                        t.append(f("%3d %-6s %-50s %s%n", a.number(), a.correct() ? "yes" : "no", clip(a.question(), 50), clip(a.answer(), 60)));
                    }
                    int need = minCorrect != null ? minCorrect : qs.size();
                    t.append(f("%n%d/%d right%s%n", r.correct(), qs.size(), composite ? " (composite)" : ""));
                    out().print(t);
                    EvalReport rep = new EvalReport(composite ? "questions (composite)" : "questions").put("model", model.toString())
                            .put("result", r).block(t.toString());
                    rep.bars("questions.png", "Questions", "right", r.answers().stream().map(a -> "Q" + a.number()).toList(),
                            Map.of("right", r.answers().stream().map(a -> a.correct() ? 1.0 : 0.0).toList()));
                    common.write(rep);
                    return gate(out(), r.complete() && r.correct() >= need, f("%d/%d right, %d needed", r.correct(), qs.size(), need));
                });
            }
        }
    }

    @Command(name = "gsm8k", mixinStandardHelpOptions = true,
            description = "GSM8K zero-shot step by step through the chat template, with lm-evaluation-harness's strict (#### N) and "
                    + "flexible (last number) extraction; results appended to --results as they come (a rerun resumes).")
    static final class Gsm8kCmd extends Gate {
        @Parameters(index = "0", paramLabel = "MODEL", description = "A chat model: .gguf file or checkpoint folder.")
        Path model;

        @Option(names = "--data", required = true, paramLabel = "TEST.jsonl", description = "GSM8K problems: {\"question\", \"answer\"} per line.")
        Path data;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "-1", description = "Only the first N problems.")
        int limit;

        @Option(names = "--parallel", paramLabel = "N", defaultValue = "1", description = "Problems in flight at once (default ${DEFAULT-VALUE}).")
        int parallel;

        @Option(names = "--results", paramLabel = "FILE.jsonl", description = "Results file (default: gsm8k-results.jsonl in --report DIR, "
                + "else next to the data).")
        Path results;

        @Option(names = "--max-tokens", paramLabel = "N", defaultValue = "512", description = "Tokens per reply (default ${DEFAULT-VALUE}).")
        int maxTokens;

        @Option(names = "--min-accuracy", paramLabel = "P", description = "Gate: flexible accuracy at least P (0..1).")
        Double minAccuracy;

        @Override
        public Integer call() {
            if (parallel < 1) {
                throw new EdgeLmException("--parallel must be >= 1, got " + parallel);
            }
            if (limit == 0 || limit < -1) {
                throw new EdgeLmException("--limit must be >= 1, got " + limit);
            }
            List<Gsm8k.Problem> problems = Gsm8k.read(existing(data, "--data"), limit);
            Path resultsFile = results != null ? results : common.report != null ? common.report.resolve("gsm8k-results.jsonl")
                    : data.toAbsolutePath().resolveSibling(data.getFileName() + ".results.jsonl");
            try {
                Files.createDirectories(resultsFile.toAbsolutePath().getParent());
            } catch (IOException e) {
                throw new EdgeLmException(resultsFile + ": cannot create its folder: " + e.getMessage());
            }
            ChatFormat format = ChatFormat.load(existing(model, "MODEL"));
            try (Engine engine = common.engine(model)) {
                return stoppable(stop -> {
                    Gsm8k.Result r = Gsm8k.run(engine, format, problems, resultsFile, parallel, maxTokens, progress(), stop);
                    String t = f("%-18s %8s %10s %20s%n", "filter", "correct", "accuracy", "Wilson 95%")
                            + f("%-18s %4d/%-4d %9.2f%% %9.2f%% - %6.2f%%%n", "strict-match", r.strictCorrect(), r.n(), 100 * r.strictAccuracy(),
                                    100 * r.strictWilson().low(), 100 * r.strictWilson().high())
                            + f("%-18s %4d/%-4d %9.2f%% %9.2f%% - %6.2f%%%n", "flexible-extract", r.flexibleCorrect(), r.n(),
                                    100 * r.flexibleAccuracy(), 100 * r.flexibleWilson().low(), 100 * r.flexibleWilson().high())
                            + f("%n%d of %d problems scored (%d from an earlier run); results in %s%n", r.n(), problems.size(), r.resumed(), resultsFile);
                    out().print(t);
                    Map<String, Object> summary = new LinkedHashMap<>();
                    summary.put("n", r.n());
                    summary.put("strictCorrect", r.strictCorrect());
                    summary.put("flexibleCorrect", r.flexibleCorrect());
                    summary.put("strictWilson", r.strictWilson());
                    summary.put("flexibleWilson", r.flexibleWilson());
                    EvalReport rep = new EvalReport("gsm8k").put("model", model.toString()).put("result", summary).block(t);
                    rep.bars("gsm8k.png", "GSM8K accuracy", "accuracy", List.of("strict-match", "flexible-extract"),
                            Map.of("accuracy", List.of(r.strictAccuracy(), r.flexibleAccuracy())));
                    common.write(rep);
                    if (!r.complete()) {
                        out().println("stopped: rerun the same command to resume");
                        return 1;
                    }
                    return minAccuracy == null ? 0 : gate(out(), r.flexibleAccuracy() >= minAccuracy,
                            f("flexible accuracy %.4f >= %.4f", r.flexibleAccuracy(), minAccuracy));
                });
            }
        }
    }

    private static String clip(String s, int n) {
        String one = s.replace('\n', ' ');
        return one.length() <= n ? one : one.substring(0, n - 1) + "…";
    }
}
