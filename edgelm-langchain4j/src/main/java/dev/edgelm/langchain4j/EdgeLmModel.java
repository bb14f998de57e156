package dev.edgelm.langchain4j;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.engine.batch.BatchOptions;
import dev.edgelm.engine.batch.BatchScheduler;
import dev.edgelm.grammar.Vocabulary;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.tokenizer.Tokenizer;
import java.util.Arrays;

/**
 * A model loaded for LangChain4j: the {@link Engine}, its chat format (tokenizer, template, stop tokens) and a
 * {@link BatchScheduler} that runs the generations. Requests from any number of threads are decoded together
 * ({@code parallel} at once, the rest wait), and a request that repeats an earlier one's history (every tool
 * round of an AI service, every turn of a chat memory) prefills only its new tokens, from the scheduler's prefix
 * cache. One instance may back an {@link EdgeLmChatModel} and an {@link EdgeLmStreamingChatModel} at once.
 */
public final class EdgeLmModel implements AutoCloseable {

    /**
     * How the model runs.
     *
     * @param threads       kernel worker threads (0: the physical cores)
     * @param contextLength tokens one request may hold, prompt and reply together
     * @param parallel      generations decoded at once
     * @param cacheRamBytes memory for the state snapshots reused across requests (0: no reuse)
     */
    public record Settings(int threads, int contextLength, int parallel, long cacheRamBytes) {
        public static final int DEFAULT_CONTEXT = 8192;

        public Settings {
            if (threads < 0) {
                throw new IllegalArgumentException("threads must be >= 0 (0 = the physical cores), got " + threads);
            }
            if (parallel < 1) {
                throw new IllegalArgumentException("parallel must be >= 1, got " + parallel);
            }
            if (cacheRamBytes < 0) {
                throw new IllegalArgumentException("cacheRamBytes must be >= 0, got " + cacheRamBytes);
            }
            EngineOptions.checkContext(contextLength, "contextLength");
        }

        /** The physical cores, {@value #DEFAULT_CONTEXT} tokens, one generation at a time, 256 MiB of snapshots. */
        public static Settings defaults() {
            return new Settings(0, DEFAULT_CONTEXT, 1, 256L << 20);
        }
    }

    private final String name;
    private final Engine engine;
    private final ChatFormat format;
    private final BatchScheduler scheduler;
    private final TokenDecoder decoder;
    private final int imStart;
    private Vocabulary vocabulary;
    private volatile boolean closed;

    private EdgeLmModel(String name, Engine engine, ChatFormat format, Settings settings) {
        this.name = name;
        this.engine = engine;
        this.format = format;
        this.scheduler = new BatchScheduler(engine, new BatchOptions(settings.parallel(), settings.contextLength(),
                settings.cacheRamBytes(), engine.options().prefillChunk()));
        Tokenizer tokenizer = format.tokenizer();
        this.imStart = tokenizer.id("<|im_start|>").orElse(-1);
        this.decoder = () -> {
            IncrementalDecoder d = tokenizer.newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int token) {
                    // a model's padding rows (ids past the vocabulary) can be sampled: they have no text
                    return tokenizer.hasToken(token) ? d.accept(token) : "";
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
    }

    /**
     * Opens what {@code model} names, as {@code edgelm run} does: a {@code .gguf} file, a Hugging Face checkpoint
     * folder, or a Hub id such as {@code Qwen/Qwen3.5-0.8B} (downloaded and converted once into the cache). A
     * model that cannot be opened is an {@link dev.edgelm.util.EdgeLmException} naming it.
     */
    public static EdgeLmModel open(String model, Settings settings) {
        EngineOptions options = EngineOptions.defaults().withMaxNumTokens(settings.contextLength());
        if (settings.threads() > 0) {
            options = options.withThreads(EngineOptions.checkThreads(settings.threads(), "threads"));
        }
        Engine engine = Engine.open(model, options);
        try {
            return new EdgeLmModel(model, engine, ChatFormat.load(engine.modelPath()), settings);
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    /** The name the model was opened by (what responses report as the model name). */
    public String name() {
        return name;
    }

    public Engine engine() {
        return engine;
    }

    public ChatFormat format() {
        return format;
    }

    BatchScheduler scheduler() {
        return scheduler;
    }

    TokenDecoder decoder() {
        return decoder;
    }

    int contextLength() {
        return scheduler.options().contextLength();
    }

    /** The vocabulary as the grammar's token mask walks it (built on first use). */
    synchronized Vocabulary vocabulary() {
        if (vocabulary == null) {
            vocabulary = Vocabulary.of(format.tokenizer(), engine.config().vocabSize());
        }
        return vocabulary;
    }

    /** Offsets of the prompt's message starts ({@code <|im_start|>}): where a later request usually parts from it. */
    int[] messageStarts(int[] prompt) {
        if (imStart < 0) {
            return new int[0];
        }
        int n = 0;
        int[] out = new int[prompt.length];
        for (int i = 1; i < prompt.length; i++) {
            if (prompt[i] == imStart) {
                out[n++] = i;
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** Whether {@link #close()} was called: requests then fail. */
    public boolean isClosed() {
        return closed;
    }

    /** Stops the running generations and frees the model. */
    @Override
    public void close() {
        closed = true;
        try {
            scheduler.close();
        } finally {
            engine.close();
        }
    }
}
