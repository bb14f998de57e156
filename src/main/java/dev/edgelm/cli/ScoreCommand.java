package dev.edgelm.cli;

import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.Sampler;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.OutputFile;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Teacher-forced logits of a token sequence, optionally followed by greedy generation. */
@Command(name = "score", mixinStandardHelpOptions = true,
        description = "Write the logits of every position of a token sequence as a NumPy float32 array [T, vocab].")
final class ScoreCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = ModelSource.MODEL_HELP)
    String name;

    @Mixin
    ModelSource source;

    @Option(names = "--tokens", required = true, paramLabel = "IDS",
            description = "Token ids: 1,2,3 or @file (ids separated by commas or white space).")
    String tokens;

    @Option(names = "--chunk-size", paramLabel = "N", description = "Prefill in chunks of at most N tokens (default ${DEFAULT-VALUE}).",
            defaultValue = "" + ChunkPlan.DEFAULT_MAX_CHUNK)
    int chunkSize;

    @Option(names = "--chunks", paramLabel = "SIZES", split = ",",
            description = "Explicit chunk sizes adding up to the number of tokens, e.g. 17,13,11.")
    int[] chunks;

    @Option(names = "--greedy", paramLabel = "N", defaultValue = "0",
            description = "Then generate N tokens by argmax; their logits rows are appended to the output.")
    int greedy;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "Output .npy file.")
    Path output;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", description = "Worker threads (default: physical cores).")
    Integer threads;

    @Override
    public Integer call() {
        if (greedy < 0) {
            throw new EdgeLmException("--greedy must be >= 0, got " + greedy);
        }
        Integer workers = threads == null ? null : EngineOptions.checkThreads(threads, "--threads");
        if (chunks != null && spec.commandLine().getParseResult().hasMatchedOption("--chunk-size")) {
            throw new EdgeLmException("--chunk-size and --chunks exclude each other: give one");
        }
        int[] ids = TokenIds.parse(tokens, "--tokens");
        ChunkPlan plan = chunks != null ? ChunkPlan.explicit(chunks) : ChunkPlan.maxChunk(chunkSize);
        plan.split(ids.length); // validate before loading the model
        long positions = (long) ids.length + greedy;
        if (positions > EngineOptions.MAX_CONTEXT_TOKENS) {
            throw new EdgeLmException("--tokens (" + ids.length + ") and --greedy (" + greedy + ") make " + positions
                    + " positions, more than the " + EngineOptions.MAX_CONTEXT_TOKENS + " a sequence may hold");
        }
        Path model = source.resolve(name, main.context).path();
        OutputFile target = OutputFile.streamable(output, "-o", ConvertCommand.inputFiles(model));
        try (Qwen35Model m = ModelLoader.load(model, workers != null ? workers : Parallel.physicalCores())) {
            int vocab = m.config().vocabSize();
            SequenceState state = m.newState((int) positions);
            float[] prompt = m.prefill(state, ids, plan, true);
            Sampler.requireFinite(prompt, 0, prompt.length);
            // rows: prompt logits, then the logits fed by each generated token except the last one,
            // streamed to the file as they are computed
            long rows = greedy > 0 ? ids.length + greedy - 1L : ids.length;
            int[] generated = new int[greedy];
            Npy.writeFloat32Rows(target, rows, vocab, sink -> {
                for (int t = 0; t < ids.length; t++) {
                    sink.put(prompt, t * vocab);
                }
                float[] last = java.util.Arrays.copyOfRange(prompt, (ids.length - 1) * vocab, ids.length * vocab);
                for (int i = 0; i < greedy; i++) {
                    generated[i] = Sampler.argmax(last);
                    if (i + 1 < greedy) {
                        last = m.forward(state, generated, i, 1, Qwen35Model.Logits.LAST);
                        Sampler.requireFinite(last, 0, vocab);
                        sink.put(last, 0);
                    }
                }
            });
            if (greedy > 0) {
                PrintWriter out = spec.commandLine().getOut();
                out.println("greedy: " + TokenIds.join(generated));
                out.flush();
            }
        }
        return 0;
    }
}
