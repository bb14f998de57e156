package dev.edgelm.cli;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.Warmup;
import dev.edgelm.startup.KernelPrimer;
import dev.edgelm.server.EdgeLmServer;
import dev.edgelm.server.ServedModel;
import dev.edgelm.server.ServerOptions;
import dev.edgelm.server.BatchBackend;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

/** An OpenAI-compatible HTTP server for one model. */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Serve a model over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/completions, "
                + "/v1/models, /health, /metrics, /tokenize, /detokenize, /apply-template).",
                "Listens on 127.0.0.1 unless --host says otherwise; another address needs --api-key. SIGTERM or Ctrl+C "
                        + "finishes the requests under way, refuses new ones and exits 0."})
final class ServeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL", defaultValue = RunCommand.DEFAULT_MODEL,
            description = "A .gguf file, a checkpoint folder, or a Hugging Face model id, as for 'edgelm run'. Default: ${DEFAULT-VALUE}.")
    String model;

    @picocli.CommandLine.Mixin
    ModelSource source;

    @Option(names = "--host", paramLabel = "ADDR", defaultValue = ServerOptions.DEFAULT_HOST,
            description = "Address to listen on. Default: ${DEFAULT-VALUE} (this machine only).")
    String host;

    @Option(names = "--port", paramLabel = "P", defaultValue = "" + ServerOptions.DEFAULT_PORT,
            description = "TCP port (0 = any free one). Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--api-key", paramLabel = "KEY", description = "Clients must send 'Authorization: Bearer KEY'. "
            + "Default: the EDGELM_API_KEY environment variable, else none (then only a loopback --host is allowed).")
    String apiKey;

    @Option(names = "--parallel", paramLabel = "N", defaultValue = "2",
            description = "Generations running at once (1-" + MAX_PARALLEL + "); they decode together, one batched "
                    + "forward pass per token. Default: ${DEFAULT-VALUE}.")
    int parallel;

    @Option(names = "--queue", paramLabel = "N", defaultValue = "64",
            description = "Requests that may wait for a free slot; more get 429 with Retry-After. Default: ${DEFAULT-VALUE}.")
    int queue;

    @Option(names = "--ctx", paramLabel = "N", defaultValue = "" + EngineOptions.DEFAULT_MAX_NUM_TOKENS,
            description = "Context of each request in tokens (prompt and reply; the KV cache grows as it is used). "
                    + "Default: ${DEFAULT-VALUE}.")
    int ctx;

    @Option(names = "--cache-ram", paramLabel = "MB", defaultValue = "2048",
            description = "Memory for state snapshots kept to reuse between requests (about 20 MB each for "
                    + "Qwen3.5-0.8B). Default: ${DEFAULT-VALUE}.")
    long cacheRamMb;

    @Option(names = "--alias", paramLabel = "NAME", description = "The model's name in the API. Default: MODEL as given.")
    String alias;

    @Option(names = "--threads", paramLabel = "N", description = "Worker threads of the kernels. Default: the physical cores.")
    Integer threads;

    /** Each slot holds a logits row (the vocabulary's floats) and a sequence state; beyond this, memory goes first. */
    static final int MAX_PARALLEL = 64;

    private volatile boolean ready;

    @Override
    public Integer call() {
        if (parallel < 1 || parallel > MAX_PARALLEL) {
            throw new EdgeLmException("--parallel must be between 1 and " + MAX_PARALLEL + ", got " + parallel);
        }
        if (queue < 0) {
            throw new EdgeLmException("--queue must be at least 0, got " + queue);
        }
        if (ctx < 16) {
            throw new EdgeLmException("--ctx must be at least 16, got " + ctx);
        }
        if (cacheRamMb < 0) {
            throw new EdgeLmException("--cache-ram must be at least 0, got " + cacheRamMb);
        }
        String key = apiKey != null ? apiKey : main.context.env().get("EDGELM_API_KEY");
        ServerOptions options = new ServerOptions(host, port, key, ServerOptions.DEFAULT_MAX_BODY_BYTES,
                ServerOptions.DEFAULT_MAX_MESSAGES); // refuses a non-loopback host without a key
        PrintWriter err = spec.commandLine().getErr();
        CountDownLatch stop = new CountDownLatch(1);
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                // sun.misc.Signal rather than a shutdown hook: the hook would run after the JVM chose exit status 143
                Signal.handle(new Signal(name), sig -> {
                    if (!ready) {
                        System.exit(0); // nothing is being served yet: stop loading
                    }
                    stop.countDown();
                });
            } catch (IllegalArgumentException e) {
                err.println("warning: cannot handle SIG" + name + " (" + e.getMessage() + "); it will stop the server at once");
            }
        }
        EdgeLmServer server = EdgeLmServer.start(options);
        String url = "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + server.port();
        err.println("edgelm serve: listening on " + url + " (loading " + model + ")");
        try (KernelPrimer primer = KernelPrimer.start()) { // the kernels compile while the model loads
            Path path = source.resolve(model, main.context).path();
            primer.forModel(path);
            ChatFormat format = ChatFormat.loadIfPresent(path).orElseThrow(() -> new EdgeLmException(path
                    + ": this model has no tokenizer, so it cannot take text"));
            format.template();
            EngineOptions eo = EngineOptions.defaults().withMaxNumTokens(ctx);
            if (threads != null) {
                eo = eo.withThreads(threads);
            }
            Engine engine = Engine.load(path, eo);
            primer.finish();
            Warmup.runToCompletion(engine); // compile the kernels before the first request (health says 503 meanwhile)
            BatchBackend.warmUp(engine, parallel); // and the batched decode kernels
            BatchBackend backend = new BatchBackend(engine, parallel, queue, cacheRamMb << 20);
            ServedModel served = new ServedModel(alias != null ? alias : model, engine, format, backend);
            served.prime(); // the template's constant start into the prefix cache: a one-shot prompt prefills only its own tokens
            server.serve(served);
        } catch (RuntimeException e) {
            server.stop();
            throw e;
        }
        ready = true;
        err.println("edgelm serve: ready: " + url + "/v1 (model '" + (alias != null ? alias : model) + "', " + parallel
                + " slots, context " + ctx + ")");
        err.flush();
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        err.println("edgelm serve: stopping: finishing " + server.activeRequests() + " request(s) under way");
        err.flush();
        server.stop();
        err.println("edgelm serve: stopped");
        return 0;
    }
}
