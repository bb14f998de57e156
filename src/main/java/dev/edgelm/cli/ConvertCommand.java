package dev.edgelm.cli;

import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.MmprojConverter;
import dev.edgelm.convert.MmprojType;
import dev.edgelm.convert.MmprojWriter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Hugging Face checkpoint folder to one GGUF file. */
@Command(name = "convert", mixinStandardHelpOptions = true,
        description = "Convert a Hugging Face Qwen3.5 checkpoint folder into one GGUF file (llama.cpp's qwen35 layout) "
                + "carrying the weights, tokenizer, chat template, stop tokens and generation defaults.")
final class ConvertCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "CHECKPOINT_DIR", description = "Hugging Face checkpoint folder.")
    Path checkpoint;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "Output .gguf file.")
    Path output;

    @Option(names = "--quant", paramLabel = "RECIPE", defaultValue = "bf16",
            description = "bf16 (as released), int8 (Q8_0 everywhere) or int4 (Q4_0 linear layers, Q8_0 embedding and "
                    + "output head). Norms, ssm_a, ssm_dt.bias and the conv stay F32. Default: ${DEFAULT-VALUE}.")
    String quant;

    @Option(names = "--mmproj-type", paramLabel = "TYPE", defaultValue = "f16",
            description = "When the checkpoint has a vision tower, its projector file mmproj-<output name>.gguf is written "
                    + "beside the output: encoder matrices f16, bf16 or f32 (the merger in Q8_0 under int8 / int4; norms, "
                    + "biases and the position table F32). Default: ${DEFAULT-VALUE}.")
    String mmprojType;

    @Option(names = "--no-mmproj", description = "Do not write the vision projector file.")
    boolean noMmproj;

    @Override
    public Integer call() {
        QuantRecipe recipe = QuantRecipe.parse(quant);
        MmprojType visionType = MmprojType.parse(mmprojType);
        // the vision config is checked before the text model is written, so a bad one fails early
        boolean vision = !noMmproj && Files.isRegularFile(checkpoint.resolve("config.json"))
                && MmprojConverter.shapeOf(checkpoint) != null;
        if (Files.isDirectory(output)) {
            throw new EdgeLmException(output + ": is a folder; -o needs a file name");
        }
        Path parent = output.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new EdgeLmException(output + ": folder " + parent + " does not exist");
        }
        PrintStream err = System.err;
        ProgressBar bar = new ProgressBar(err);
        GgufConverter.Result r;
        try {
            r = GgufConverter.convert(checkpoint, output, recipe, w -> err.println("warning: " + w), bar);
        } finally {
            bar.done();
        }
        String types = r.typeCounts().entrySet().stream()
                .sorted(Map.Entry.<GgmlType, Integer>comparingByValue().reversed())
                .map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
        spec.commandLine().getOut().printf("wrote %s: %s, %d tensors (%s), recipe %s%s%n", r.output(), Sizes.bytes(r.bytes()),
                r.tensors(), types, recipe.cliName(), r.tokenizer() ? "" : ", no tokenizer");
        if (vision) {
            Path mmproj = MmprojConverter.besideModel(output);
            ProgressBar visionBar = new ProgressBar(err);
            MmprojWriter.Result v;
            try {
                v = MmprojConverter.convert(checkpoint, mmproj, visionType, recipe, w -> err.println("warning: " + w), visionBar);
            } finally {
                visionBar.done();
            }
            spec.commandLine().getOut().printf("wrote %s: vision projector, %s, %d tensors (%s)%n", v.output(), Sizes.bytes(v.bytes()),
                    v.tensors(), describe(v.typeCounts()));
        }
        spec.commandLine().getOut().flush();
        return 0;
    }

    static String describe(Map<GgmlType, Integer> typeCounts) {
        return typeCounts.entrySet().stream()
                .sorted(Map.Entry.<GgmlType, Integer>comparingByValue().reversed())
                .map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
    }
}
