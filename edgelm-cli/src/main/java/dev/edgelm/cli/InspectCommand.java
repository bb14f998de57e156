package dev.edgelm.cli;

import dev.edgelm.convert.HfTokenizerFiles;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.model.GgufLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.vision.VisionConfig;
import dev.edgelm.vision.VisionLoader;
import dev.edgelm.vision.VisionModel;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import dev.edgelm.hub.ModelResolver;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** What a model file or folder holds: architecture, sizes, quantisation mix, tokenizer, template, stop tokens. */
@Command(name = "inspect", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Describe a model without running it: the file it resolves to, its size and quantisation, "
                + "context length, architecture, tokenizer, chat template and stop tokens.")
final class InspectCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "MODEL", description = ModelSource.MODEL_HELP)
    String name;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Mixin
    ModelSource source;

    private Path model;
    private ModelResolver.Resolved resolved;

    /** Count and bytes of the tensors of one storage type. */
    private static final class Mix {
        int count;
        long bytes;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        resolved = source.resolve(name, main.context);
        model = resolved.path();
        if (json) {
            out.println(InspectJson.of(resolved));
        } else {
            out.printf("resolved:     %s -> %s%n", name, resolved.describe());
            long ctx = ModelResolver.contextLength(resolved);
            out.printf("context:      %s%n", ctx > 0 ? Sizes.count(ctx) + " tokens (the model's; run's default capacity "
                    + Sizes.count(dev.edgelm.engine.EngineOptions.DEFAULT_MAX_NUM_TOKENS) + ", -c to change)" : "not stated");
            if (resolved.format() == ModelResolver.Format.CHECKPOINT) {
                inspectFolder(out);
            } else {
                inspectGguf(out);
            }
        }
        out.flush();
        return 0;
    }

    private void inspectGguf(PrintWriter out) {
        try (GgufFile g = GgufFile.open(model)) {
            if (g.metadata().optString("general.architecture").orElse("").equals("clip")) {
                VisionConfig v = VisionLoader.configOf(g);
                out.printf("model:        %s (GGUF v%d, vision projector, %s)%n", model, g.version(), Sizes.bytes(g.fileSize()));
                describeVision(out, v, "this file");
                long params = 0;
                Map<String, Mix> mix = new TreeMap<>();
                for (GgufTensorInfo t : g.tensorInfos().values()) {
                    Mix m = mix.computeIfAbsent(t.type().name(), k -> new Mix());
                    m.count++;
                    m.bytes += t.byteSize();
                    params += t.elementCount();
                }
                out.printf("parameters:   %s in %d tensors%n", Sizes.count(params), g.tensorInfos().size());
                describeMix(out, mix);
                return;
            }
            Qwen35Config c = GgufLoader.config(g);
            out.printf("model:        %s (GGUF v%d, %s)%n", model, g.version(), Sizes.bytes(g.fileSize()));
            out.printf("architecture: %s, name '%s'%n", g.metadata().requireString("general.architecture"),
                    g.metadata().optString("general.name").orElse(""));
            describeConfig(out, c);
            Map<String, Mix> mix = new TreeMap<>();
            long params = 0;
            for (GgufTensorInfo t : g.tensorInfos().values()) {
                Mix m = mix.computeIfAbsent(t.type().name(), k -> new Mix());
                m.count++;
                m.bytes += t.byteSize();
                params += t.elementCount();
            }
            out.printf("parameters:   %s in %d tensors%n", Sizes.count(params), g.tensorInfos().size());
            out.printf("file size:    %s%n", Sizes.bytes(g.fileSize()));
            describeMix(out, mix);
            describeTokenizer(out, GgufTokenizerData.read(g.metadata()), GenerationDefaults.read(g.metadata()));
        }
        describeProjectorBeside(out);
    }

    /** The vision projector a GGUF model would use (the mmproj file beside it), if any. */
    private void describeProjectorBeside(PrintWriter out) {
        Optional<Path> projector = VisionModel.locate(model);
        if (projector.isEmpty()) {
            out.println("vision:       none (no mmproj-*.gguf beside the model)");
            return;
        }
        try (GgufFile p = GgufFile.open(projector.get())) {
            describeVision(out, VisionLoader.configOf(p), projector.get().getFileName().toString());
        }
    }

    private static void describeVision(PrintWriter out, VisionConfig v, String where) {
        out.printf("vision:       %d blocks, width %d, %d heads x %d, MLP %d (%s)%n", v.depth(), v.hidden(), v.heads(),
                v.headDim(), v.intermediate(), where);
        out.printf("              patch %d x %d (%d frames), merge %d x %d, position table %d x %d, output %d%n", v.patch(),
                v.patch(), v.temporalPatch(), v.merge(), v.merge(), v.gridSide(), v.gridSide(), v.outHidden());
    }

    private void inspectFolder(PrintWriter out) {
        Path configPath = model.resolve("config.json");
        if (!Files.isRegularFile(configPath)) {
            throw new EdgeLmException(model + ": no config.json (not a Hugging Face checkpoint folder)");
        }
        Qwen35Config c = Qwen35Config.load(configPath);
        out.printf("model:        %s (Hugging Face checkpoint)%n", model);
        out.printf("architecture: Qwen3.5 (config.json)%n");
        describeConfig(out, c);
        Map<String, Mix> mix = new TreeMap<>();
        long params = 0;
        int count;
        try (SafetensorsCheckpoint ckpt = SafetensorsCheckpoint.open(model)) {
            count = ckpt.tensors().size();
            for (TensorView t : ckpt.tensors().values()) {
                Mix m = mix.computeIfAbsent(t.dtype(), k -> new Mix());
                m.count++;
                m.bytes += t.data().byteSize();
                params += t.elementCount();
            }
        }
        out.printf("parameters:   %s in %d tensors%n", Sizes.count(params), count);
        out.printf("file size:    %s (folder)%n", Sizes.bytes(folderSize()));
        describeMix(out, mix);
        describeTokenizer(out, HfTokenizerFiles.read(model, c.vocabSize()), HfTokenizerFiles.generationDefaults(model));
        Optional<VisionConfig> v = VisionModel.checkpointConfig(model);
        if (v.isPresent()) {
            describeVision(out, v.get(), "model.visual.* in the checkpoint");
        } else {
            out.println("vision:       none");
        }
    }

    private long folderSize() {
        try (Stream<Path> files = Files.list(model)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            throw new EdgeLmException(model + ": cannot list: " + e.getMessage());
        }
    }

    private static void describeConfig(PrintWriter out, Qwen35Config c) {
        out.printf("layers:       %d (%s: %d full attention, %d Gated DeltaNet), hidden %d, mlp %d%n", c.numLayers(),
                c.layerPattern(), c.numFullAttentionLayers(), c.numLayers() - c.numFullAttentionLayers(),
                c.hiddenSize(), c.intermediateSize());
        out.printf("attention:    %d heads / %d KV heads x %d, rotary %d dims, theta %s%n", c.numHeads(), c.numKvHeads(),
                c.headDim(), c.rotaryDim(), Sizes.count((long) c.ropeTheta()));
        out.printf("linear attn:  %d key heads x %d, %d value heads x %d, conv %d%s%n", c.linearKeyHeads(),
                c.linearKeyDim(), c.linearValueHeads(), c.linearValueDim(), c.convKernel(),
                c.linearValueHeads() > c.linearKeyHeads() ? (c.valueHeadsTiled() ? ", value heads tiled" : ", value heads grouped") : "");
        out.printf("vocab:        %d, %s embeddings%n", c.vocabSize(), c.tiedEmbeddings() ? "tied" : "untied");
    }

    private static void describeMix(PrintWriter out, Map<String, Mix> mix) {
        String label = "quantisation:";
        for (Map.Entry<String, Mix> e : mix.entrySet()) {
            out.printf("%-14s%-6s %4d tensors  %s%n", label, e.getKey(), e.getValue().count, Sizes.bytes(e.getValue().bytes));
            label = "";
        }
    }

    private static void describeTokenizer(PrintWriter out, Optional<GgufTokenizerData> tok, GenerationDefaults gen) {
        if (tok.isEmpty()) {
            out.println("tokenizer:    none");
        } else {
            GgufTokenizerData t = tok.get();
            out.printf("tokenizer:    %s, pre %s, %d tokens (%d control, %d user-defined, %d unused), %d merges%n", t.model(),
                    t.pre(), t.tokens().length, t.count(GgufTokenizerData.TYPE_CONTROL), t.count(GgufTokenizerData.TYPE_USER_DEFINED),
                    t.count(GgufTokenizerData.TYPE_UNUSED), t.merges().length);
            out.printf("chat template: %s%n", t.chatTemplate() == null ? "none" : "yes (" + t.chatTemplate().length() + " chars)");
            StringBuilder stops = new StringBuilder();
            for (int id : t.stopTokenIds(gen)) {
                stops.append(stops.isEmpty() ? "" : ", ").append(id);
                if (id >= 0 && id < t.tokens().length) {
                    stops.append(' ').append(t.tokens()[id]);
                }
            }
            out.printf("stop tokens:  %s%n", stops.isEmpty() ? "none" : stops);
        }
        out.printf("generation:   %s%n", gen.describe());
    }
}
