package dev.edgelm.cli;

import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.convert.SnapshotGguf;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.Warmup;
import dev.edgelm.hub.HubClient;
import dev.edgelm.hub.ModelReference;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.jline.terminal.Terminal;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Chat with a model: one answer, or an interactive chat on a terminal. */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Chat with a model. With --prompt (or text piped in): print one answer and exit. "
                + "Without, on a terminal: an interactive chat (/help lists its commands).",
                "Piped text is appended to --prompt: cat notes.txt | edgelm run --prompt \"Summarize\"."})
final class RunCommand implements Callable<Integer> {
    static final String DEFAULT_MODEL = "Qwen/Qwen3.5-0.8B";

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL", defaultValue = DEFAULT_MODEL,
            description = "A .gguf file, a checkpoint folder, or a Hugging Face model id (downloaded, then converted once "
                    + "to an int8 GGUF file kept beside it). Default: ${DEFAULT-VALUE}.")
    String model;

    @Option(names = "--prompt", paramLabel = "TEXT", description = "Answer this and exit.")
    String prompt;

    @Option(names = "--system", paramLabel = "TEXT", description = "System prompt.")
    String system;

    @Option(names = "--think", negatable = true, description = "Let the model think before it answers (shown dimmed on a "
            + "terminal). Default: off.")
    boolean think;

    @Option(names = "--max-tokens", paramLabel = "N", description = "At most N tokens per answer. Default: until the "
            + "model ends its turn or the context is full.")
    Integer maxTokens;

    @Option(names = "--temperature", paramLabel = "T", description = "Sampling temperature; 0 = greedy. Default: the "
            + "model's generation config, greedy without one.")
    Float temperature;

    @Option(names = "--top-k", paramLabel = "K", description = "Sample among the K most likely tokens; 0 = off.")
    Integer topK;

    @Option(names = "--top-p", paramLabel = "P", description = "Sample among the most likely tokens that make up P.")
    Float topP;

    @Option(names = "--min-p", paramLabel = "P", description = "Drop tokens less likely than P times the most likely.")
    Float minP;

    @Option(names = "--seed", paramLabel = "N", description = "Random seed, for repeatable sampling.")
    Long seed;

    @Option(names = "--threads", paramLabel = "N", description = "Worker threads. Default: the physical cores.")
    Integer threads;

    @Option(names = "--max-num-tokens", paramLabel = "N", description = "Context capacity in tokens (prompt, history "
            + "and answers). Default: " + EngineOptions.DEFAULT_MAX_NUM_TOKENS + ".")
    Integer maxNumTokens;

    @Option(names = "--server", paramLabel = "URL", description = "Send the chat to a running 'edgelm serve' (or another "
            + "OpenAI-compatible server) instead of loading the model here: no load or warm-up time. Default: the "
            + "EDGELM_SERVER environment variable, else none.")
    String server;

    @Override
    public Integer call() {
        ProcessContext context = main.context;
        String question = question(context);
        boolean interactive = question == null;
        String serverUrl = server != null ? server : context.env().get("EDGELM_SERVER");
        if (serverUrl != null && !serverUrl.isBlank()) {
            if (interactive) {
                throw new EdgeLmException("with --server (or EDGELM_SERVER), give --prompt or pipe text in: one answer is sent");
            }
            return remote(serverUrl, question, context);
        }
        if (interactive && !context.stdinIsTerminal()) {
            throw new EdgeLmException("nothing to answer: give --prompt, pipe text in, or run on a terminal for a chat");
        }
        Path path = localModel(model, context);
        ChatFormat format = ChatFormat.loadIfPresent(path).orElseThrow(() -> new EdgeLmException(path
                + ": this model has no tokenizer, so it cannot take text; it runs on token ids only: edgelm score "
                + path + " --tokens 1,2,3"));
        EngineOptions engineOptions = EngineOptions.defaults();
        if (threads != null) {
            engineOptions = engineOptions.withThreads(threads);
        }
        if (maxNumTokens != null) {
            engineOptions = engineOptions.withMaxNumTokens(maxNumTokens);
        }
        try (Engine engine = Engine.load(path, engineOptions)) {
            GenerationOptions options = generationOptions(engine);
            Conversation conversation = Conversation.start(engine, format);
            conversation.setSystem(system);
            conversation.setThinking(think);
            if (interactive) {
                try (Terminal terminal = context.terminal().open(); Warmup warmup = Warmup.start(engine)) {
                    new ChatRepl(terminal, conversation, options, model, warmup).run();
                } catch (IOException e) {
                    throw new EdgeLmException("cannot open the terminal: " + e.getMessage());
                }
            } else {
                PrintWriter out = spec.commandLine().getOut();
                ReplyPrinter printer = new ReplyPrinter(out, context.stdoutIsTerminal() ? ReplyPrinter.ANSI_DIM : s -> s);
                Reply r = conversation.send(question, options, printer);
                printer.end();
                if (r.reason() == StopReason.CONTEXT_FULL) {
                    spec.commandLine().getErr().println("note: the answer was cut: the context is full (--max-num-tokens)");
                }
            }
        }
        return 0;
    }

    /** One answer from a running server, streamed to standard output as on the local path. */
    private int remote(String url, String question, ProcessContext context) {
        com.fasterxml.jackson.databind.node.ObjectNode body = dev.edgelm.server.Json.object().put("model", model);
        com.fasterxml.jackson.databind.node.ArrayNode messages = body.putArray("messages");
        if (system != null) {
            messages.addObject().put("role", "system").put("content", system);
        }
        messages.addObject().put("role", "user").put("content", question);
        if (maxTokens != null) {
            if (maxTokens < 1) {
                throw new EdgeLmException("--max-tokens must be at least 1, got " + maxTokens);
            }
            body.put("max_tokens", maxTokens);
        }
        if (temperature != null) {
            body.put("temperature", temperature);
        }
        if (topK != null) {
            body.put("top_k", topK);
        }
        if (topP != null) {
            body.put("top_p", topP);
        }
        if (minP != null) {
            body.put("min_p", minP);
        }
        if (seed != null) {
            body.put("seed", seed);
        }
        body.putObject("chat_template_kwargs").put("enable_thinking", think);
        PrintWriter out = spec.commandLine().getOut();
        ReplyPrinter printer = new ReplyPrinter(out, context.stdoutIsTerminal() ? ReplyPrinter.ANSI_DIM : s -> s);
        dev.edgelm.server.ChatClient.Result r = new dev.edgelm.server.ChatClient(url, context.env().get("EDGELM_API_KEY")).chat(body, printer::onAnswer, printer::onThinking);
        printer.end();
        if ("length".equals(r.finishReason())) {
            spec.commandLine().getErr().println("note: the answer was cut at the token limit");
        }
        return 0;
    }

    /** --prompt, with piped standard input appended (or piped input alone); null when there is neither. */
    private String question(ProcessContext context) {
        String piped = context.readPiped().map(b -> new String(b, StandardCharsets.UTF_8)).filter(s -> !s.isBlank()).orElse(null);
        if (prompt == null) {
            return piped;
        }
        return piped == null ? prompt : prompt + "\n\n" + piped;
    }

    /**
     * MODEL as a local file or folder; a Hub id is downloaded and converted once to an int8 GGUF file. Shared
     * with {@code serve}, so both resolve a model name the same way.
     */
    static Path localModel(String model, ProcessContext context) {
        if (isLocal(model)) {
            return Path.of(model);
        }
        PrintStream err = System.err;
        Path checkpoint = ModelReference.resolve(model, () -> HubClient.fromEnvironment(context.env(), err));
        if (!Files.isRegularFile(checkpoint.resolve(SnapshotGguf.FILE_NAME))) {
            err.println("converting " + model + " to an int8 GGUF file (once): " + checkpoint.resolve(SnapshotGguf.FILE_NAME));
        }
        ProgressBar bar = new ProgressBar(err);
        try {
            return SnapshotGguf.int8(checkpoint, w -> err.println("warning: " + w), bar);
        } finally {
            bar.done();
        }
    }

    private static boolean isLocal(String spec) {
        try {
            return Files.exists(Path.of(spec));
        } catch (InvalidPathException e) {
            return false;
        }
    }

    private GenerationOptions generationOptions(Engine engine) {
        GenerationOptions.Builder b = engine.defaultGenerationOptions();
        if (maxTokens != null) {
            if (maxTokens < 1) {
                throw new EdgeLmException("--max-tokens must be at least 1, got " + maxTokens);
            }
            b.maxNewTokens(maxTokens);
        }
        if (temperature != null) {
            b.temperature(temperature);
        }
        if (topK != null) {
            b.topK(topK);
        }
        if (topP != null) {
            b.topP(topP);
        }
        if (minP != null) {
            b.minP(minP);
        }
        if (seed != null) {
            b.seed(seed);
        }
        return b.build();
    }
}
