package dev.edgelm.cli;

import dev.edgelm.convert.MmprojConverter;
import dev.edgelm.convert.MmprojType;
import dev.edgelm.convert.MmprojWriter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.RowStreamWriter;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticMmproj;
import dev.edgelm.synth.SyntheticModel;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.OutputFile;
import java.io.PrintStream;
import java.util.List;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** A GGUF with random weights at a released Qwen3.5 shape, for speed and memory measurements. */
@Command(name = "synth", mixinStandardHelpOptions = true,
        description = {"Write a GGUF with random weights at the exact shapes of a released Qwen3.5 text decoder, in the "
                + "layout and recipes of 'convert', with a stand-in byte-level tokenizer: a file to benchmark without "
                + "a download. Its output is noise.",
                "Same size, recipe and seed: the same file, byte for byte."})
final class SynthCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--size", required = true, paramLabel = "SIZE", description = "0.8b, 2b or 4b.")
    String size;

    @Option(names = "--quant", paramLabel = "RECIPE", defaultValue = "int8",
            description = "int8 (Q8_0 everywhere, as 'edgelm run' converts a download), int4 (Q4_0 linear layers, Q8_0 "
                    + "embedding) or bf16. Default: ${DEFAULT-VALUE}.")
    String quant;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "Output .gguf file.")
    Path output;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Seed of the weights (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--mmproj", description = "Also write a vision projector file (mmproj-<output name>.gguf) beside the output, "
            + "random weights at the released vision tower of the size.")
    boolean mmproj;

    @Option(names = "--mmproj-type", paramLabel = "TYPE", defaultValue = "f16",
            description = "The projector's encoder matrices: f16, bf16 or f32 (merger Q8_0 under int8 / int4). Default: ${DEFAULT-VALUE}.")
    String mmprojType;

    @Override
    public Integer call() {
        SynthShape shape = SynthShape.released(size);
        QuantRecipe recipe = QuantRecipe.parse(quant);
        MmprojType visionType = MmprojType.parse(mmprojType);
        OutputFile.regular(output, "-o", List.of());
        PrintStream err = System.err;
        ProgressBar bar = new ProgressBar(err);
        long start = System.nanoTime();
        RowStreamWriter.Result r;
        try {
            r = SyntheticModel.write(shape, recipe, seed, output, w -> err.println("warning: " + w), bar, Parallel.physicalCores());
        } finally {
            bar.done();
        }
        String types = r.typeCounts().entrySet().stream()
                .sorted(Map.Entry.<GgmlType, Integer>comparingByValue().reversed())
                .map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
        spec.commandLine().getOut().printf("wrote %s: %s random weights, %s, %d tensors (%s), recipe %s, seed %d, %.1f s%n",
                r.output(), shape.modelName(), Sizes.bytes(r.bytes()), r.tensors(), types, recipe.cliName(), seed,
                (System.nanoTime() - start) / 1e9);
        if (mmproj) {
            Path file = MmprojConverter.besideModel(output);
            ProgressBar visionBar = new ProgressBar(err);
            MmprojWriter.Result v;
            try {
                v = SyntheticMmproj.write(shape, visionType, recipe, seed, file, w -> err.println("warning: " + w), visionBar);
            } finally {
                visionBar.done();
            }
            spec.commandLine().getOut().printf("wrote %s: %s vision projector random weights, %s, %d tensors (%s)%n", v.output(),
                    shape.modelName(), Sizes.bytes(v.bytes()), v.tensors(), ConvertCommand.describe(v.typeCounts()));
        }
        spec.commandLine().getOut().flush();
        return 0;
    }
}
