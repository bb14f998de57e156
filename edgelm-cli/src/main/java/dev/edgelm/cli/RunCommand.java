package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.engine.Warmup;
import dev.edgelm.startup.KernelPrimer;
import dev.edgelm.hub.HubRepoId;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jline.terminal.Terminal;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Chat with a model: one answer, or an interactive chat on a terminal. */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Chat with a model. With a PROMPT (or -p, or text piped in): print one answer and exit. "
                + "Without, on a terminal: an interactive chat (/help lists its commands).",
                "Piped text is appended to the prompt: cat notes.txt | edgelm run -p \"Summarize\". A one-shot "
                + "answer goes to standard output, the model's thinking (--think) to standard error."})
final class RunCommand implements Callable<Integer> {
    static final String DEFAULT_MODEL = "Qwen/Qwen3.5-0.8B";
    /** Prompts at least this long get a "reading N tokens" note on a terminal. */
    static final int LONG_PROMPT = 256;

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL", defaultValue = DEFAULT_MODEL,
            description = ModelSource.MODEL_HELP + " A Hub model is converted once to an int8 GGUF file kept in the "
                    + "cache. Default: ${DEFAULT-VALUE}.")
    String model;

    @Parameters(index = "1", arity = "0..1", paramLabel = "PROMPT", description = "Answer this and exit (as -p).")
    String positionalPrompt;

    @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT", description = "Answer this and exit.")
    String prompt;

    @Option(names = "--system", paramLabel = "TEXT", description = "System prompt.")
    String system;

    @Option(names = "--stdin", description = "With --prompt: wait for piped text to its end (without, piped text is "
            + "appended when it is there at once).")
    boolean waitForStdin;

    @Option(names = "--allow-special", description = "Let special-token texts such as <|im_start|> in the prompt and "
            + "piped text become those tokens. Default: they are plain text, so a document cannot fake chat turns.")
    boolean allowSpecial;

    @Option(names = "--think", negatable = true, description = "Let the model think before it answers. Default: off.")
    boolean think;

    @Option(names = "--hide-thinking", description = "With --think: do not show the thinking, only the answer.")
    boolean hideThinking;

    @Option(names = {"-n", "--max-tokens"}, paramLabel = "N", description = "At most N tokens per answer. Default: "
            + "until the model ends its turn or the context is full.")
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

    @Option(names = "--repeat-penalty", paramLabel = "R", description = "Divide the logits of tokens already in the "
            + "context by R (1 = off).")
    Float repeatPenalty;

    @Option(names = "--presence-penalty", paramLabel = "Q", description = "Subtract Q from tokens generated at least once "
            + "(0 = off).")
    Float presencePenalty;

    @Option(names = "--frequency-penalty", paramLabel = "F", description = "Subtract F per time a token was generated "
            + "(0 = off).")
    Float frequencyPenalty;

    @Option(names = "--stop", paramLabel = "TEXT", description = "Stop when the answer contains TEXT (repeatable).")
    List<String> stop;

    @Option(names = {"-s", "--seed"}, paramLabel = "N", description = "Random seed, for repeatable sampling.")
    Long seed;

    @Option(names = {"--image", "--attachment"}, paramLabel = "FILE", description = "An image for the (first) message; "
            + "repeat for several. Needs a model with a vision tower (see --mmproj).")
    List<Path> images = new ArrayList<>();

    @Option(names = "--mmproj", paramLabel = "FILE", description = "The vision projector (mmproj .gguf). Default: the "
            + "mmproj-*.gguf beside a .gguf model, or the checkpoint folder's own vision tower.")
    Path mmproj;

    @Option(names = "--image-max-pixels", paramLabel = "N", description = "Resize images to at most N pixels (fewer image tokens: faster).")
    Long imageMaxPixels;

    @Option(names = "--image-min-pixels", paramLabel = "N", description = "Resize images to at least N pixels.")
    Long imageMinPixels;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", description = "Worker threads. Default: the physical cores.")
    Integer threads;

    @Option(names = {"-c", "--ctx-size", "--max-num-tokens"}, paramLabel = "N", description = "Context capacity in "
            + "tokens (prompt, history and answers). Default: " + EngineOptions.DEFAULT_MAX_NUM_TOKENS + ".")
    Integer maxNumTokens;

    @Option(names = "--chat-template-file", paramLabel = "FILE", description = "Use this Jinja chat template instead of "
            + "the model's.")
    Path chatTemplateFile;

    @Option(names = "--raw", description = "No chat template: continue the prompt text as it is (a completion).")
    boolean raw;

    @Option(names = "--json", description = "One-shot: print one JSON object (answer, thinking, stop reason, token "
            + "counts, timings) instead of streaming the answer.")
    boolean json;

    @Option(names = {"-v", "--verbose"}, description = "Say which file is loaded and how long it took, and print each "
            + "reply's timings (prompt tokens, prefill and decode tokens/s, time to first token) to standard error.")
    boolean verbose;

    @Mixin
    ModelSource source;

    @Option(names = "--server", paramLabel = "URL", description = "Send the chat to a running 'edgelm serve' (or another "
            + "OpenAI-compatible server) instead of loading the model here: no load or warm-up time. Default: the "
            + "EDGELM_SERVER environment variable, else none.")
    String server;

    @Override
    public Integer call() {
        ProcessContext context = main.context;
        promptGivenAsModel();
        String serverUrl = server != null ? server : context.env().get("EDGELM_SERVER");
        boolean remote = serverUrl != null && !serverUrl.isBlank();
        // A one-shot run on a model file starts its kernel primer before the prompt is read: with standard input not a
        // terminal (a script, a pipe, /dev/null) reading it may wait up to ProcessContext.OPTIONAL_INPUT_WAIT_MS, and
        // the primer is the first token's critical path (docs/lab/startup.md, round 4). Otherwise it starts as before.
        Path file = !remote && (prompt != null || positionalPrompt != null) ? existingFile(model) : null;
        KernelPrimer early = file != null ? KernelPrimer.start() : null;
        try {
            if (early != null) {
                early.forModel(file);
            }
            String question = question(context);
            boolean interactive = question == null;
            if (interactive && !context.stdinIsTerminal()) {
                throw new EdgeLmException("nothing to answer: give a prompt (edgelm run MODEL \"question\", or -p), pipe text "
                        + "in, or run on a terminal for a chat");
            }
            if (interactive && (raw || json)) {
                throw new EdgeLmException((raw ? "--raw" : "--json") + " needs a prompt (-p TEXT or piped text)");
            }
            if (remote) {
                if (!images.isEmpty() || raw || json || allowSpecial) {
                    throw new EdgeLmException((!images.isEmpty() ? "--image" : raw ? "--raw" : json ? "--json" : "--allow-special")
                            + " is not available with --server (or EDGELM_SERVER): run the model here instead");
                }
                return interactive ? remoteChat(serverUrl, context) : remote(serverUrl, question, context);
            }
            PrintWriter err = spec.commandLine().getErr();
            if (early != null) {
                try (early) {
                    return local(context, err, early, question, interactive);
                }
            }
            try (KernelPrimer primer = KernelPrimer.start()) {
                return local(context, err, primer, question, interactive);
            }
        } catch (RuntimeException | Error e) {
            if (early != null) {
                early.abandon(); // a usage error found before the load exits now, not after the primer's pass in flight
            }
            throw e;
        }
    }

    /** {@code name} as a path when it names an existing regular file (a .gguf), else null. */
    private static Path existingFile(String name) {
        try {
            Path p = Path.of(name);
            return Files.isRegularFile(p) ? p : null;
        } catch (InvalidPathException e) {
            return null;
        }
    }

    private int local(ProcessContext context, PrintWriter err, KernelPrimer primer, String question, boolean interactive) {
        ModelResolver.Resolved resolved = source.resolve(model, context);
        Path path = resolved.path();
        primer.forModel(path); // the passes start, with this file's tensor types, while the header is read here
        ChatFormat loaded = ChatFormat.loadIfPresent(path).orElseThrow(() -> new EdgeLmException(path
                + ": this model has no tokenizer, so it cannot take text; it runs on token ids only: edgelm score "
                + path + " --tokens 1,2,3"));
        ChatFormat format = chatTemplateFile == null ? loaded : loaded.withTemplate(readTemplate(), chatTemplateFile.toString());
        EngineOptions engineOptions = EngineOptions.defaults();
        if (threads != null) {
            engineOptions = engineOptions.withThreads(EngineOptions.checkThreads(threads, "--threads"));
        }
        if (maxNumTokens != null) {
            engineOptions = engineOptions.withMaxNumTokens(EngineOptions.checkContext(maxNumTokens, "--max-num-tokens"));
        }
        for (Path image : images) {
            if (!Files.isRegularFile(image)) {
                throw new EdgeLmException(image + ": no such image file (--image)");
            }
        }
        boolean tellLoading = verbose || context.stderrIsTerminal();
        if (tellLoading) {
            err.print("loading " + resolved.describe() + " ...");
            err.flush();
        }
        try (Engine engine = Engine.load(path, engineOptions)) {
            if (tellLoading) {
                err.printf(Locale.ROOT, " %.1f s%n", engine.loadSeconds());
                err.flush();
            }
            primer.finish(); // before the first forward pass of the real model
            VisionOptions.apply(engine, mmproj, imageMinPixels, imageMaxPixels, !images.isEmpty());
            GenerationOptions options = generationOptions(engine);
            if (raw) {
                return completion(engine, format, question, options);
            }
            Conversation conversation = Conversation.start(engine, format);
            conversation.setSystem(system);
            conversation.setThinking(think);
            conversation.setAllowSpecial(allowSpecial);
            if (interactive) {
                try (Terminal terminal = context.terminal().open(); Warmup warmup = Warmup.start(engine)) {
                    ChatRepl repl = new ChatRepl(terminal, conversation, options, resolved, warmup, context.env());
                    repl.setVerbose(verbose);
                    repl.attach(images);
                    repl.run();
                } catch (IOException e) {
                    throw new EdgeLmException("cannot open the terminal: " + e.getMessage());
                }
            } else {
                oneShot(conversation, question, options, resolved, engine, context, err);
            }
        }
        return 0;
    }

    private void oneShot(Conversation conversation, String question, GenerationOptions options,
                         ModelResolver.Resolved resolved, Engine engine, ProcessContext context, PrintWriter err) {
        PrintWriter out = spec.commandLine().getOut();
        ReplyPrinter printer = new ReplyPrinter(out, hideThinking ? null : err,
                context.stderrStyled() ? ReplyPrinter.ANSI_DIM : s -> s, conversation::cancel, !json);
        if (context.stderrIsTerminal() && !json) {
            printer.withPrefillFeedback(n -> {
                if (n >= LONG_PROMPT) {
                    err.print("reading " + n + " tokens ...");
                    err.flush();
                }
            }, () -> {
                if (printer.timings.prefillTokens >= LONG_PROMPT) {
                    err.print("\r\033[K");
                    err.flush();
                }
            });
        }
        Reply r = conversation.send(Conversation.userMessage(question, images), options, printer);
        printer.end();
        if (json && !printer.outputClosed()) { // closed (| head): the reader has what it wanted
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("answer", r.answer());
            o.put("thinking", r.thinking());
            o.put("stop_reason", r.reason().name().toLowerCase(Locale.ROOT));
            o.put("model", resolved.path().toString());
            o.put("quantisation", resolved.quant());
            ObjectNode tokens = o.putObject("tokens");
            tokens.put("prompt", r.promptTokens());
            tokens.put("prefilled", r.prefilledTokens());
            tokens.put("generated", r.tokens().length);
            ObjectNode t = o.putObject("timings");
            t.put("load_seconds", engine.loadSeconds());
            t.put("ttft_seconds", printer.timings.ttftSeconds());
            t.put("prefill_tokens_per_second", printer.timings.prefillTokensPerSecond());
            t.put("decode_tokens_per_second", printer.timings.decodeTokensPerSecond());
            t.put("total_seconds", printer.timings.totalSeconds());
            out.println(o);
            out.flush();
        }
        if (verbose) {
            err.println(printer.timings.describe(r.promptTokens()));
        }
        if (r.reason() == StopReason.CONTEXT_FULL) {
            err.println("note: the answer was cut: the context is full (-c / --ctx-size)");
        }
        err.flush();
    }

    /** --raw: the prompt's tokens as they are, then generation until a stop token or a limit. */
    private int completion(Engine engine, ChatFormat format, String text, GenerationOptions options) {
        PrintWriter out = spec.commandLine().getOut();
        Session session = engine.newSession();
        int[] ids = format.tokenizer().encode(text, !allowSpecial); // untrusted text stays text unless --allow-special
        if (ids.length == 0) {
            throw new EdgeLmException("--raw: the prompt encodes to no tokens");
        }
        session.prefill(ids);
        TokenDecoder decoder = () -> {
            IncrementalDecoder d = format.tokenizer().newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int id) {
                    return format.tokenizer().hasToken(id) ? d.accept(id) : "";
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
        GenerationOptions withStops = options.toBuilder().addStopTokenIds(format.stopTokenIds()).build();
        GenerationResult r = session.generate(withStops, decoder, new GenerationListener() {
            @Override
            public void onText(String piece) {
                if (json) {
                    return;
                }
                out.print(piece);
                out.flush();
                if (out.checkError()) {
                    session.cancel();
                }
            }
        });
        if (json) {
            ObjectNode o = new ObjectMapper().createObjectNode();
            o.put("answer", r.text());
            o.put("stop_reason", r.reason().name().toLowerCase(Locale.ROOT));
            o.putObject("tokens").put("prompt", ids.length).put("generated", r.tokens().length);
            out.println(o);
        } else {
            out.println();
        }
        out.flush();
        return 0;
    }

    /** {@code edgelm run "Why is the sky blue?"}: a MODEL with spaces that names nothing is the prompt. */
    private void promptGivenAsModel() {
        if (positionalPrompt != null || prompt != null || model.equals(DEFAULT_MODEL)) {
            return;
        }
        boolean exists;
        try {
            exists = Files.exists(Path.of(model));
        } catch (InvalidPathException e) {
            exists = false;
        }
        if (!exists && HubRepoId.parse(model).isEmpty() && model.strip().contains(" ")) {
            positionalPrompt = model;
            model = DEFAULT_MODEL;
        }
    }

    /** The prompt (-p or PROMPT), with piped standard input appended (or piped input alone); null when there is neither. */
    /** One answer from a running server, streamed to standard output as on the local path. */
    private int remote(String url, String question, ProcessContext context) {
        com.fasterxml.jackson.databind.node.ObjectNode body = remoteSettings();
        com.fasterxml.jackson.databind.node.ArrayNode messages = body.putArray("messages");
        if (system != null) {
            messages.addObject().put("role", "system").put("content", system);
        }
        messages.addObject().put("role", "user").put("content", question);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ReplyPrinter printer = new ReplyPrinter(out, err, context.stderrStyled() ? ReplyPrinter.ANSI_DIM : s -> s, () -> { }, true);
        dev.edgelm.server.ChatClient client = new dev.edgelm.server.ChatClient(url, context.env().get("EDGELM_API_KEY"));
        long sentAt = System.currentTimeMillis();
        dev.edgelm.server.ChatClient.Result r = client.chat(body, printer::onAnswer, printer::onThinking);
        printer.end();
        if ("length".equals(r.finishReason())) {
            err.println("note: the answer was cut at the token limit");
        }
        if (verbose) {
            err.println(RemoteChatRepl.describe(r));
            ProcessHandle.current().info().startInstant().ifPresent(t -> err.printf(java.util.Locale.ROOT,
                    "the request left %.3f s after the process started%n", (sentAt - t.toEpochMilli()) / 1e3));
        }
        return 0;
    }

    /** The interactive chat with a running server: the history is kept here and sent whole each turn. */
    private int remoteChat(String url, ProcessContext context) {
        dev.edgelm.server.ChatClient client = new dev.edgelm.server.ChatClient(url, context.env().get("EDGELM_API_KEY"));
        try (Terminal terminal = context.terminal().open()) {
            RemoteChatRepl repl = new RemoteChatRepl(terminal, client, url, remoteSettings(), system, context.env());
            repl.setVerbose(verbose);
            repl.run();
        } catch (IOException e) {
            throw new EdgeLmException("cannot open the terminal: " + e.getMessage());
        }
        return 0;
    }

    /** The request fields the options give (model, sampling, stops, thinking), without the messages. */
    private com.fasterxml.jackson.databind.node.ObjectNode remoteSettings() {
        // JsonNodeFactory, not the server's Json: its ObjectMapper is a few tenths of a second of a fresh client process
        com.fasterxml.jackson.databind.node.ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode().put("model", model);
        if (maxTokens != null) {
            if (maxTokens < 1) {
                throw new EdgeLmException("--max-tokens must be at least 1, got " + maxTokens);
            }
            body.put("max_tokens", maxTokens);
        }
        sampling(GenerationOptions.builder()); // refused here as a local run refuses it, before anything is sent
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
        if (repeatPenalty != null) {
            body.put("repeat_penalty", repeatPenalty);
        }
        if (presencePenalty != null) {
            body.put("presence_penalty", presencePenalty);
        }
        if (frequencyPenalty != null) {
            body.put("frequency_penalty", frequencyPenalty);
        }
        if (stop != null && !stop.isEmpty()) {
            com.fasterxml.jackson.databind.node.ArrayNode stops = body.putArray("stop");
            stop.forEach(stops::add);
        }
        body.putObject("chat_template_kwargs").put("enable_thinking", think);
        return body;
    }

    private String question(ProcessContext context) {
        if (prompt != null && positionalPrompt != null) {
            throw new EdgeLmException("two prompts: give either PROMPT or -p/--prompt");
        }
        String given = prompt != null ? prompt : positionalPrompt;
        String piped = context.readPiped(given != null && !waitForStdin).map(b -> new String(b, StandardCharsets.UTF_8)).filter(s -> !s.isBlank()).orElse(null);
        if (given == null) {
            return piped;
        }
        return piped == null ? given : given + "\n\n" + piped;
    }

    private String readTemplate() {
        try {
            return Files.readString(chatTemplateFile);
        } catch (IOException e) {
            throw new EdgeLmException("--chat-template-file " + chatTemplateFile + ": cannot read: " + e.getMessage());
        }
    }

    /**
     * The sampling options into {@code b}, each checked as the engine checks it (a finite temperature >= 0, top-p in
     * (0, 1], ...); a value out of range fails naming the option. The same check runs before a request goes to a
     * server, so {@code --server} refuses what a local run refuses.
     */
    private void sampling(GenerationOptions.Builder b) {
        set("--temperature", temperature, b::temperature);
        set("--top-k", topK, b::topK);
        set("--top-p", topP, b::topP);
        set("--min-p", minP, b::minP);
        set("--repeat-penalty", repeatPenalty, b::repetitionPenalty);
        set("--presence-penalty", presencePenalty, b::presencePenalty);
        set("--frequency-penalty", frequencyPenalty, b::frequencyPenalty);
    }

    private static <T> void set(String option, T value, java.util.function.Consumer<T> setter) {
        if (value != null) {
            try {
                setter.accept(value);
            } catch (EdgeLmException e) {
                throw new EdgeLmException(option + ": " + e.getMessage());
            }
        }
    }

    private GenerationOptions generationOptions(Engine engine) {
        GenerationOptions.Builder b = engine.defaultGenerationOptions();
        if (maxTokens != null) {
            if (maxTokens < 1) {
                throw new EdgeLmException("-n/--max-tokens must be at least 1, got " + maxTokens);
            }
            b.maxNewTokens(maxTokens);
        }
        sampling(b);
        if (stop != null && !stop.isEmpty()) {
            b.stopStrings(stop);
        }
        if (seed != null) {
            b.seed(seed);
        }
        return b.build();
    }
}
