package dev.edgelm.startup;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticModel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
 * passes call each kernel often enough for C2 to compile it while the real model is still being read.
 *
 * <p>The passes share nothing with the real model (their own engine, file and thread); {@link #close()} waits
 * for them, so that they never compete with a real forward pass for the cores.
 */
public final class KernelPrimer implements AutoCloseable {
    /**
     * The 0.8B's attention heads (8 query heads of 256 on 2 KV heads: groups of 4) and DeltaNet heads (128
     * wide) at a quarter of their number, hidden size 128, MLP 256, four layers (three DeltaNet, one full
     * attention), the 256 byte tokens and the special tokens as vocabulary.
     */
    static final SynthShape SHAPE = new SynthShape("primer", "EdgeLM kernel primer", 128, 4, 4, 1, 256, 4, 4, 128,
            256, 320, true, 256);
    /**
     * Prompt tokens per pass: one full GEMM panel and a partial one, as a short prompt has (a 64-token pass
     * would leave the partial-panel paths to the real prompt).
     */
    static final int PROMPT_TOKENS = 40;
    static final int DECODE_TOKENS = 4;
    /** Enough passes for the kernels to reach C2; each takes milliseconds once compiled. */
    static final int PASSES = 12;

    private final Thread thread;
    private volatile boolean stopRequested;
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
        p.thread.setDaemon(true);
        p.thread.setPriority(Thread.MIN_PRIORITY);
        p.thread.start();
        return p;
    }

    /** Runs every pass on the calling thread; returns how many ran. Failures are thrown. */
    public static int runToCompletion() {
        KernelPrimer p = new KernelPrimer(false);
        p.passes();
        return p.passes;
    }

    private void runQuietly() {
        try {
            passes();
        } catch (RuntimeException | Error e) {
            // nothing to report: priming only saves time, and the real model meets any real failure itself
        }
    }

    private void passes() {
        Path file;
        try {
            file = Files.createTempFile("edgelm-primer-", ".gguf");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            Files.delete(file); // the writer creates it atomically
            file.toFile().deleteOnExit(); // should the process end during a pass
            SyntheticModel.write(SHAPE, QuantRecipe.INT8, 1, file, w -> {}, null, 1);
            try (Engine engine = Engine.load(file, EngineOptions.defaults().withThreads(1)
                    .withMaxNumTokens(PROMPT_TOKENS + DECODE_TOKENS))) {
                int[] prompt = new int[PROMPT_TOKENS];
                for (int i = 0; i < prompt.length; i++) {
                    prompt[i] = 'a' + i % 26;
                }
                Session session = engine.newSession();
                for (int pass = 0; pass < PASSES && !stopRequested; pass++) {
                    session.reset();
                    session.prefill(prompt, ChunkPlan.maxChunk(PROMPT_TOKENS));
                    for (int i = 0; i < DECODE_TOKENS && !stopRequested; i++) {
                        session.decode(prompt[i]);
                    }
                    passes = pass + 1;
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
     * Waits for the passes to end (with {@code edgelm.primer=stop}: only for the one in flight). Call it before
     * the first forward pass of the real model.
     */
    public void finish() {
        stopRequested = !waitForAll;
        join();
    }

    /** Stops the passes and waits for the one in flight, if any (a command that fails does not wait for them). */
    @Override
    public void close() {
        stopRequested = true;
        join();
    }

    private void join() {
        boolean interrupted = false;
        while (thread != null && thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
