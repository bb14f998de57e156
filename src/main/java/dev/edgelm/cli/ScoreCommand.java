package dev.edgelm.cli;

import dev.edgelm.engine.Sampler;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.ModelLoader;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.util.EdgeLmException;
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
        if (threads != null && threads < 1) {
            throw new EdgeLmException("--threads must be >= 1, got " + threads);
        }
        int[] ids = TokenIds.parse(tokens, "--tokens");
        ChunkPlan plan = chunks != null ? ChunkPlan.explicit(chunks) : ChunkPlan.maxChunk(chunkSize);
        plan.split(ids.length); // validate before loading the model
        Path model = source.resolve(name, main.context).path();
        try (Qwen35Model m = ModelLoader.load(model, threads != null ? threads : Parallel.physicalCores())) {
            int vocab = m.config().vocabSize();
            SequenceState state = m.newState(ids.length + greedy);
            float[] prompt = m.prefill(state, ids, plan, true);
            if (greedy > 0) {
                // rows: prompt logits, then the logits fed by each generated token except the last one
                int rows = ids.length + greedy - 1;
                float[] all = java.util.Arrays.copyOf(prompt, rows * vocab);
                int[] generated = new int[greedy];
                float[] last = java.util.Arrays.copyOfRange(prompt, (ids.length - 1) * vocab, ids.length * vocab);
                for (int i = 0; i < greedy; i++) {
                    generated[i] = Sampler.argmax(last);
                    if (i + 1 < greedy) {
                        last = m.forward(state, generated, i, 1, Qwen35Model.Logits.LAST);
                        System.arraycopy(last, 0, all, (ids.length + i) * vocab, vocab);
                    }
                }
                PrintWriter out = spec.commandLine().getOut();
                out.println("greedy: " + TokenIds.join(generated));
                out.flush();
                Npy.writeFloat32(output, all, rows, vocab);
            } else {
                Npy.writeFloat32(output, prompt, ids.length, vocab);
            }
        }
        return 0;
    }
}
