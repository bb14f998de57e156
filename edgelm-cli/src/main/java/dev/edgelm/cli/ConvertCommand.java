package dev.edgelm.cli;

import dev.edgelm.convert.GgufConverter;
import dev.edgelm.convert.MmprojConverter;
import dev.edgelm.convert.MmprojType;
import dev.edgelm.convert.MmprojWriter;
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
import dev.edgelm.hub.ModelResolver;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Hugging Face checkpoint folder to one GGUF file. */
@Command(name = "convert", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Convert a Hugging Face Qwen3.5 checkpoint (a folder, or a Hub id: its download) into one GGUF "
                + "file (llama.cpp's qwen35 layout) carrying the weights, tokenizer, chat template, stop tokens and "
                + "generation defaults.")
final class ConvertCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A checkpoint folder (config.json + *.safetensors), "
            + "or a Hugging Face model id such as Qwen/Qwen3.5-0.8B (optionally @revision): its checkpoint, downloaded "
            + "if its weights are not in the cache.")
    String name;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "Output .gguf file.")
    Path output;

    @Option(names = "--quant", paramLabel = "RECIPE", defaultValue = "int8",
            description = "int8 (Q8_0 everywhere; what 'edgelm run' makes of a download), int4 (Q4_0 linear layers, "
                    + "Q8_0 embedding and output head) or bf16 (as released). Norms, ssm_a, ssm_dt.bias and the conv "
                    + "stay F32. Default: ${DEFAULT-VALUE}.")
    String quant;

    @Option(names = "--offline", description = "Never touch the network (also HF_HUB_OFFLINE=1).")
    boolean offline;

    @Option(names = "--mmproj-type", paramLabel = "TYPE", defaultValue = "f16",
            description = "When the checkpoint has a vision tower, its projector file mmproj-<output name>.gguf is written "
                    + "beside the output: encoder matrices f16, bf16 or f32 (the merger in Q8_0 under int8 / int4; norms, "
                    + "biases and the position table F32). Default: ${DEFAULT-VALUE}.")
    String mmprojType;

    @Option(names = "--no-mmproj", description = "Do not write the vision projector file.")
    boolean noMmproj;

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
        MmprojType visionType = MmprojType.parse(mmprojType);
        if (Files.isDirectory(output)) {
            throw new EdgeLmException(output + ": is a folder; -o needs a file name");
        }
        Path parent = output.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new EdgeLmException(output + ": folder " + parent + " does not exist");
        }
        Path checkpoint = ModelResolver.resolve(name, ModelResolver.Options.defaults().withEnv(main.context.env())
                .withOffline(offline).withCheckpoint(true)).path();
        if (!Files.isDirectory(checkpoint)) {
            throw new EdgeLmException(name + " is a GGUF file already; convert reads a checkpoint folder (config.json + "
                    + "*.safetensors) or a Hub id");
        }
        // the vision config is checked before the text model is written, so a bad one fails early
        boolean vision = !noMmproj && Files.isRegularFile(checkpoint.resolve("config.json"))
                && MmprojConverter.shapeOf(checkpoint) != null;
        OutputFile.regular(output, "-o", inputFiles(checkpoint));
        if (vision) {
            OutputFile.regular(MmprojConverter.besideModel(output), "the vision projector beside -o", inputFiles(checkpoint));
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
