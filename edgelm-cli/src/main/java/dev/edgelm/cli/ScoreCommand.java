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
import dev.edgelm.engine.Engine;
import dev.edgelm.format.gguf.GgufTokenizerData;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.model.ModelInput;
import dev.edgelm.vision.VisionModel;
import dev.edgelm.vision.VisionTokens;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
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

    @Option(names = "--images", paramLabel = "FILES", split = ",", description = "Images, in the order of their "
            + "runs in --tokens: each run of image-pad ids (between <|vision_start|> and <|vision_end|>) must be as "
            + "long as its image's token count.")
    List<Path> images = new ArrayList<>();

    @Option(names = "--image-embeddings", paramLabel = "FILE", description = "Also write the vision tower's output "
            + "(all images, in order) as NumPy float32 [tokens, hidden].")
    Path imageEmbeddings;

    @Option(names = "--mmproj", paramLabel = "FILE", description = "The vision projector (default: found beside the model).")
    Path mmproj;

    @Option(names = "--image-max-pixels", paramLabel = "N", description = "Resize images to at most N pixels.")
    Long imageMaxPixels;

    @Option(names = "--image-min-pixels", paramLabel = "N", description = "Resize images to at least N pixels.")
    Long imageMinPixels;

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
        if (imageEmbeddings != null && images.isEmpty()) {
            throw new EdgeLmException("--image-embeddings needs --images");
        }
        for (Path image : images) {
            if (!Files.isRegularFile(image)) {
                throw new EdgeLmException(image + ": no such image file (--images)");
            }
        }
        Path model = source.resolve(name, main.context).path();
        OutputFile target = OutputFile.streamable(output, "-o", ConvertCommand.inputFiles(model));
        int threadCount = workers != null ? workers : Parallel.physicalCores();
        ModelLoader.Opened opened = ModelLoader.open(model, threadCount);
        try (Qwen35Model m = opened.model()) {
            int vocab = m.config().vocabSize();
            SequenceState state = m.newState((int) positions);
            float[] prompt;
            if (images.isEmpty()) {
                prompt = m.prefill(state, ids, plan, true);
            } else {
                VisionTokens tokens = (opened.ggufMetadata() != null
                        ? opened.ggufMetadata().optStringArray(GgufTokenizerData.TOKENS).flatMap(VisionTokens::fromVocabulary)
                        : VisionTokens.fromConfig(model.resolve("config.json"))).orElseThrow(() -> new EdgeLmException(
                                model + ": the model declares no image token, so it cannot take images"));
                List<ImageEmbedding> encoded = encode(model, m.config().hiddenSize(), threadCount);
                checkRuns(ids, tokens, encoded);
                prompt = m.prefill(state, ModelInput.withImages(ids, tokens.imagePad(), encoded, m.config().hiddenSize(), 0),
                        plan, true);
            }
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

    private List<ImageEmbedding> encode(Path model, int hidden, int threadCount) {
        Path projector = mmproj != null ? mmproj : VisionModel.locate(model).orElseThrow(() -> new EdgeLmException(
                model + ": this model has no vision tower, so it cannot take images (name a projector with --mmproj)"));
        List<ImageEmbedding> out = new ArrayList<>();
        try (VisionModel vision = VisionModel.open(projector, threadCount)) {
            for (Path image : images) {
                out.add(Engine.embedding(vision, hidden, vision.preprocess(image, imageMinPixels, imageMaxPixels)));
            }
        }
        if (imageEmbeddings != null) {
            int total = 0;
            for (ImageEmbedding e : out) {
                total += e.tokens();
            }
            float[] all = new float[total * hidden];
            int o = 0;
            for (ImageEmbedding e : out) {
                System.arraycopy(e.rows(), 0, all, o, e.rows().length);
                o += e.rows().length;
            }
            Npy.writeFloat32(imageEmbeddings, all, total, hidden);
        }
        return out;
    }

    /** Each image-pad run must match its image's token count: an error names the image file and both counts. */
    private void checkRuns(int[] ids, VisionTokens tokens, List<ImageEmbedding> encoded) {
        int image = 0;
        for (int t = 0; t < ids.length; ) {
            if (ids[t] == tokens.videoPad() && tokens.videoPad() >= 0) {
                throw new EdgeLmException("--tokens: video tokens (id " + ids[t] + " at index " + t + ") are not supported");
            }
            if (ids[t] != tokens.imagePad()) {
                t++;
                continue;
            }
            int end = t;
            while (end < ids.length && ids[end] == tokens.imagePad()) {
                end++;
            }
            if (image >= encoded.size()) {
                throw new EdgeLmException("--tokens holds more image-pad runs than the " + encoded.size()
                        + " image(s) of --images (another run at index " + t + ")");
            }
            if (end - t != encoded.get(image).tokens()) {
                throw new EdgeLmException(images.get(image) + " gives " + encoded.get(image).tokens()
                        + " image tokens but its image-pad run in --tokens (at index " + t + ") has " + (end - t));
            }
            image++;
            t = end;
        }
        if (image != encoded.size()) {
            throw new EdgeLmException("--images gives " + encoded.size() + " image(s) but --tokens holds " + image
                    + " image-pad run(s)");
        }
    }
}
