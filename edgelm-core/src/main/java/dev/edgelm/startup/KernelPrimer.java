package dev.edgelm.startup;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.format.gguf.GgufTensorTypes;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Gets the kernels of a fresh process compiled before its first prompt: forward passes of a tiny synthetic
 * model, on a background thread, while the real model loads.
 *
 * <p>Why: the Vector API kernels run one to two orders of magnitude slower until C2 has compiled them. Left
 * to the first prompt, each kernel is entered once for a long loop, runs interpreted until an on-stack
 * replacement is compiled, and is compiled a second time for its next call; C2 spent 8.5 s on that for a
 * 47-token prompt on the 0.8B int8 file, half of it on on-stack replacements (docs/lab/startup.md). The tiny
 * model has the released models' head widths and head groups (so the kernels take the branches the real model
 * takes) but a hidden size of 128 and four layers, so a pass costs little even interpreted, and twelve
 * passes call each kernel often enough for C2 to compile it while the real model is still being read. Its
 * tensors take the ggml types of the file about to be loaded ({@link #forModel}, read from that file's header
 * on the primer's thread; see {@link PrimerModel}): a Q4_K_M file gets its Q4_K and Q6_K kernels compiled, not
 * Q8_0's.
 *
 * <p>The passes share nothing with the real model (their own engine, file and thread); {@link #close()} waits
 * for them, so that they never compete with a real forward pass for the cores.
 */
public final class KernelPrimer implements AutoCloseable {
    /**
     * The 0.8B's attention heads (8 query heads of 256 on 2 KV heads: two groups of 4) and its DeltaNet heads (128
     * wide) at a quarter of their number, hidden size 128, MLP 256, four layers (three DeltaNet, one full
     * attention), the 256 byte tokens and the special tokens as vocabulary. Two KV groups, not one: with one, each
     * pass called the group attention kernels 44 times, and twelve passes left them C1-compiled (the Vector API's
     * Java fallback) until 0.3-1.2 s after the primer ended (docs/lab/decode-bandwidth.md). Files with K-quant or
     * Q4_0 matrices get a wider variant ({@link PrimerModel#shapeFor}: an MLP of 1024, hidden size 256 for the
     * K-quants), so that their working copies' full-width kernel paths are compiled too.
     */
    static final SynthShape SHAPE = new SynthShape("primer", "EdgeLM kernel primer", 128, 4, 8, 2, 256, 4, 4, 128,
            256, 320, true, 256);
    /**
     * Prompt tokens per pass: one full GEMM panel and a partial one, as a short prompt has (a 64-token pass
     * would leave the partial-panel paths to the real prompt).
     */
    static final int PROMPT_TOKENS = 40;
    static final int DECODE_TOKENS = 4;
    /** The passes {@link #finish()} waits for: enough for the kernels to reach C2. */
    static final int PASSES = 12;
    /**
     * The passes run while the real model is still loading, if time allows: each one that runs before the prompt
     * is a compilation the prompt does not wait for (docs/lab/startup.md: 12 passes against 40 and 60).
     */
    static final int MAX_PASSES = 64;
    /**
     * For measuring: {@code edgelm.primer.passes} (the passes {@link #finish()} waits for), {@code edgelm.primer.threads}
     * (the tiny model's pool) and {@code edgelm.primer.log=true} (each step's JVM uptime on standard error).
     */
    private static final int PASS_MINIMUM = Integer.getInteger("edgelm.primer.passes", PASSES);
    private static final int PASS_LIMIT = Math.max(PASS_MINIMUM, MAX_PASSES);
    private static final boolean LOG = Boolean.getBoolean("edgelm.primer.log");
    private static final int THREADS = Integer.getInteger("edgelm.primer.threads", 1);
    /**
     * How long {@link #finish()} waits for the passes before it stops them (then only the pass in flight is awaited).
     * In a quiet minute the twelve passes end 3.5 s after the process starts, about when the 0.8B model is loaded
     * (docs/lab/startup.md); a primer starved by other work must not hold the prompt back for longer than the
     * prompt would need to compile its kernels itself (2-5 s, the same page). {@code edgelm.primer.wait}
     * (milliseconds) for measuring.
     */
    static final long FINISH_WAIT_MS = Math.max(1, Long.getLong("edgelm.primer.wait", 5_000));

    private final Thread thread;
    /** The file the real model is loaded from (null: none is coming, stop). */
    private final CompletableFuture<Path> model = new CompletableFuture<>();
    private volatile boolean stopRequested;
    /** Set by {@link #finish()}: the real model is loaded, run no more passes than {@link #PASSES}. */
    private volatile boolean finishing;
    private volatile int passes;
    /**
     * Whether {@link #close()} lets every pass run: measured, a first token 2.4-2.8 s after the prompt against
     * 2.7-4.1 s when close stops them at the end of the load (docs/lab/startup.md).
     */
    private boolean waitForAll;

    private KernelPrimer(boolean background) {
        thread = background ? new Thread(this::runQuietly, "edgelm-primer") : null;
    }

    /**
     * Starts the passes on a daemon thread. The system property {@code edgelm.primer} is for measuring:
     * {@code off} (no passes) and {@code stop} ({@link #close()} stops the passes instead of letting them finish).
     */
    public static KernelPrimer start() {
        String mode = System.getProperty("edgelm.primer", "on");
        KernelPrimer p = new KernelPrimer(!mode.equals("off"));
        if (p.thread == null) {
            return p;
        }
        p.waitForAll = !mode.equals("stop");
        log("start");
        p.thread.setDaemon(true);
        p.thread.setPriority(Thread.MIN_PRIORITY);
        p.thread.start();
        return p;
    }

    /**
     * Names the file the real model will be loaded from: the passes start, on a tiny model with that file's
     * tensor types. Call it as soon as the model reference is resolved; until then the primer's thread waits.
     */
    public void forModel(Path file) {
        if (model.complete(file)) {
            log("model named");
        }
    }

    /** Runs {@link #PASSES} passes on the calling thread on a tiny Q8_0 model; returns how many ran. Failures are thrown. */
    public static int runToCompletion() {
        return runToCompletion(Map.of());
    }

    /** As {@link #runToCompletion()}, with the tensor types of a real file (name to type, as in its header). */
    static int runToCompletion(Map<String, GgmlType> types) {
        KernelPrimer p = new KernelPrimer(false);
        p.finishing = true; // nothing loads meanwhile: the passes finish() would wait for
        p.passes(types);
        return p.passes;
    }

    private void runQuietly() {
        try {
            Path file = awaitModel();
            if (file == null) {
                return;
            }
            Map<String, GgmlType> types;
            try {
                types = GgufTensorTypes.read(file);
            } catch (RuntimeException e) {
                types = Map.of(); // not a GGUF (a checkpoint folder, a damaged file): prime the Q8_0 kernels
            }
            passes(types);
        } catch (RuntimeException | Error e) {
            // nothing to report: priming only saves time, and the real model meets any real failure itself
        }
    }

    private Path awaitModel() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return model.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    return null;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void log(String step) {
        if (LOG) {
            System.err.println("primer " + step + " at " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms");
        }
    }

    private void passes(Map<String, GgmlType> types) {
        Path file;
        try {
            file = Files.createTempFile("edgelm-primer-", ".gguf");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            Files.delete(file); // the writer creates it atomically
            file.toFile().deleteOnExit(); // should the process end during a pass
            log("types");
            PrimerModel.write(types, file);
            log("written");
            try (Engine engine = Engine.load(file, EngineOptions.defaults().withThreads(THREADS)
                    .withMaxNumTokens(PROMPT_TOKENS + DECODE_TOKENS))) {
                log("loaded");
                int[] prompt = new int[PROMPT_TOKENS];
                for (int i = 0; i < prompt.length; i++) {
                    prompt[i] = 'a' + i % 26;
                }
                Session session = engine.newSession();
                for (int pass = 0; pass < PASS_LIMIT && !stopRequested && !(finishing && pass >= PASS_MINIMUM); pass++) {
                    session.reset();
                    session.prefill(prompt, ChunkPlan.maxChunk(PROMPT_TOKENS));
                    for (int i = 0; i < DECODE_TOKENS && !stopRequested; i++) {
                        session.decode(prompt[i]);
                    }
                    passes = pass + 1;
                    log("pass " + pass);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a temporary file; the system cleans it up
            }
        }
    }

    /** Passes run so far. */
    public int passesRun() {
        return passes;
    }

    /**
     * Waits until {@link #PASSES} passes have run, or for the one in flight if more have (with
     * {@code edgelm.primer=stop}: only for the one in flight). Call it before the first forward pass of the real
     * model.
     */
    public void finish() {
        finish(FINISH_WAIT_MS);
    }

    /** As {@link #finish()}, stopping the passes after {@code waitMillis} (at least 1). */
    void finish(long waitMillis) {
        log("finish (model loaded)");
        stopRequested = !waitForAll;
        finishing = true;
        model.complete(null); // no file named: nothing to prime
        if (!join(Math.max(1, waitMillis))) {
            stopRequested = true; // a starved or slow primer: the prompt compiles what is left itself
            join(0);
        }
        log("finished, " + passes + " passes");
    }

    /** Stops the passes and waits for the one in flight, if any (a command that fails does not wait for them). */
    @Override
    public void close() {
        stopRequested = true;
        model.complete(null);
        join(0);
    }

    /**
     * Stops the passes without waiting for the one in flight: for a command that fails before its model loads (the
     * thread is a daemon and stops at its next check).
     */
    public void abandon() {
        stopRequested = true;
        model.complete(null);
    }

    /** Waits for the primer's thread, at most {@code millis} (0: until it ends); whether it ended. */
    private boolean join(long millis) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (thread != null && thread.isAlive()) {
            long left = millis == 0 ? 0 : (deadline - System.nanoTime()) / 1_000_000L;
            if (millis != 0 && left <= 0) {
                break;
            }
            try {
                thread.join(left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return thread == null || !thread.isAlive();
    }
}
