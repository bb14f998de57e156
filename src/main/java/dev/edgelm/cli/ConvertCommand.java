package dev.edgelm.cli;

import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.OutputFile;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
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

    /** The files of the checkpoint folder (or the path itself): none of them may be the output. */
    static List<Path> inputFiles(Path checkpoint) {
        List<Path> inputs = new ArrayList<>(List.of(checkpoint));
        if (Files.isDirectory(checkpoint)) {
            try (Stream<Path> files = Files.list(checkpoint)) {
                files.forEach(inputs::add);
            } catch (IOException e) {
                throw new EdgeLmException(checkpoint + ": cannot list: " + e.getMessage());
            }
        }
        return inputs;
    }

    @Override
    public Integer call() {
        QuantRecipe recipe = QuantRecipe.parse(quant);
        OutputFile.regular(output, "-o", inputFiles(checkpoint));
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
        spec.commandLine().getOut().flush();
        return 0;
    }
}
