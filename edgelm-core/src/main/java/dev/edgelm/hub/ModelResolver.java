package dev.edgelm.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.SnapshotGguf;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.util.Bytes;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.ProgressBar;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The one place where what a user names as MODEL becomes a file to load. Every command that takes a model,
 * {@code Engine.open} and the server go through {@link #resolve}, so the same name loads the same file everywhere.
 *
 * <ul>
 *   <li>a {@code .gguf} file: itself;</li>
 *   <li>a checkpoint folder ({@code config.json} + safetensors): itself, as is; a folder without
 *       {@code config.json} that holds exactly one {@code .gguf} file: that file;</li>
 *   <li>a Hugging Face model id {@code owner/name[@revision]}: the GGUF file converted from its download, kept in
 *       the cache beside it ({@code edgelm-int8.gguf} unless another quantisation is asked for or is the only one
 *       there). A model already converted is used from the cache without touching the network ({@code edgelm pull}
 *       looks for a newer revision). Otherwise it is downloaded, converted once, and its safetensors are deleted
 *       unless {@link Options#keepCheckpoint()} asks to keep them. {@link Options#checkpoint()} asks for the
 *       checkpoint folder instead (what {@code edgelm convert} reads).</li>
 * </ul>
 *
 * {@link Options#offline()} (or {@code HF_HUB_OFFLINE=1}) never touches the network.
 */
public final class ModelResolver {
    /** The default quantisation of a downloaded model, the same for {@code run}, {@code benchmark}, {@code convert}, {@code synth}. */
    public static final QuantRecipe DEFAULT_QUANT = QuantRecipe.INT8;
    /** Every form MODEL may take, for help texts. */
    public static final String MODEL_FORMS = "a .gguf file, a checkpoint folder (config.json + *.safetensors), "
            + "or a Hugging Face model id such as Qwen/Qwen3.5-0.8B (optionally @revision), downloaded once and "
            + "then used from the cache (edgelm list)";
    static final String LAST_USED = "last-used";

    private ModelResolver() {}

    public enum Format {
        /** One GGUF file. */
        GGUF,
        /** A Hugging Face checkpoint folder. */
        CHECKPOINT
    }

    /**
     * A model ready to load.
     *
     * @param name   what the user named
     * @param path   the file ({@link Format#GGUF}) or folder ({@link Format#CHECKPOINT}) to load
     * @param format its format
     * @param quant  its quantisation: {@code int8}, {@code int4}, {@code bf16} (EdgeLM's recipes), or the name of
     *               llama.cpp's file type ({@code Q4_K_M}), or the checkpoint's storage type ({@code f32})
     * @param bytes  its size on disk
     * @param repo   the Hub repository it came from, or null for a local file or folder
     */
    public record Resolved(String name, Path path, Format format, String quant, long bytes, HubRepoId repo) {
        /** {@code "edgelm-int8.gguf (769 MiB, int8)"}. */
        public String describe() {
            return path + " (" + Bytes.format(bytes) + ", " + quant + ")";
        }
    }

    /**
     * How to resolve.
     *
     * @param quant          for a Hub model: the quantisation wanted, or null for int8 (or the only one converted)
     * @param offline        never touch the network (also {@code HF_HUB_OFFLINE=1} in {@code env})
     * @param keepCheckpoint keep a download's safetensors after the conversion
     * @param checkpoint     for a Hub model: the checkpoint folder (downloaded if its weights are not there), no GGUF
     * @param env            environment: {@code HF_ENDPOINT}, {@code HF_TOKEN}, {@code EDGELM_CACHE}, {@code HF_HUB_OFFLINE}
     * @param progress       where progress and notes go (normally standard error), or null for silence
     */
    public record Options(String quant, boolean offline, boolean keepCheckpoint, boolean checkpoint,
                          Map<String, String> env, PrintStream progress) {
        public Options {
            env = Map.copyOf(new HashMap<>(env == null ? Map.of() : env));
            if (quant != null) {
                QuantRecipe.parse(quant);
            }
        }

        /** int8 (or the only one converted), online, safetensors dropped after conversion, the process's environment, stderr. */
        public static Options defaults() {
            return new Options(null, false, false, false, System.getenv(), System.err);
        }

        public Options withQuant(String q) {
            return new Options(q, offline, keepCheckpoint, checkpoint, env, progress);
        }

        public Options withOffline(boolean on) {
            return new Options(quant, on, keepCheckpoint, checkpoint, env, progress);
        }

        public Options withKeepCheckpoint(boolean on) {
            return new Options(quant, offline, on, checkpoint, env, progress);
        }

        public Options withCheckpoint(boolean on) {
            return new Options(quant, offline, keepCheckpoint, on, env, progress);
        }

        public Options withEnv(Map<String, String> e) {
            return new Options(quant, offline, keepCheckpoint, checkpoint, e, progress);
        }

        public Options withProgress(PrintStream p) {
            return new Options(quant, offline, keepCheckpoint, checkpoint, env, p);
        }

        /** {@link #offline} or {@code HF_HUB_OFFLINE} set to 1, true, yes or on. */
        public boolean isOffline() {
            String v = env.getOrDefault("HF_HUB_OFFLINE", "").strip().toLowerCase(Locale.ROOT);
            return offline || v.equals("1") || v.equals("true") || v.equals("yes") || v.equals("on");
        }
    }

    /** {@link #resolve(String, Options)} with {@link Options#defaults()}. */
    public static Resolved resolve(String name) {
        return resolve(name, Options.defaults());
    }

    /** The file or folder {@code name} stands for; downloads and converts a Hub model first if needed. */
    public static Resolved resolve(String name, Options options) {
        if (name == null || name.isBlank()) {
            throw new EdgeLmException("no model named: give a .gguf file, a checkpoint folder or a Hub id such as Qwen/Qwen3.5-0.8B");
        }
        Optional<Path> local = existing(name);
        if (local.isPresent()) {
            if (options.quant() != null) {
                throw new EdgeLmException("--quant " + options.quant() + " applies to a Hub model; " + name
                        + " is a local file or folder (convert a checkpoint with: edgelm convert " + name + " --quant "
                        + options.quant() + " -o model.gguf)");
            }
            return local(name, local.get());
        }
        Optional<HubRepoId> id = HubRepoId.parse(name);
        if (id.isEmpty()) {
            throw new EdgeLmException(name + ": no such file or folder, nor a Hugging Face model id (owner/name, "
                    + "e.g. Qwen/Qwen3.5-0.8B)");
        }
        return hub(name, id.get(), options);
    }

    /** A local file or folder as a model. */
    public static Resolved local(String name, Path path) {
        if (Files.isDirectory(path)) {
            if (Files.isRegularFile(path.resolve("config.json"))) {
                return checkpointFolder(name, path, null);
            }
            List<Path> ggufs = ggufFiles(path);
            if (ggufs.size() == 1) {
                return gguf(name, ggufs.getFirst(), null);
            }
            if (ggufs.size() > 1) {
                throw new EdgeLmException(path + " holds several .gguf files (" + String.join(", ",
                        ggufs.stream().map(p -> p.getFileName().toString()).toList()) + "): name one of them");
            }
            throw new EdgeLmException("no config.json or .gguf in " + path + ": not a model folder (a model is a .gguf "
                    + "file, or a folder with config.json and *.safetensors)");
        }
        if (GgufFile.isGgufName(path)) {
            return gguf(name, path, null);
        }
        if (path.getFileName() != null && path.getFileName().toString().endsWith(".safetensors")) {
            throw new EdgeLmException(path + ": a .safetensors file alone is not a model: name the folder that holds it "
                    + "with its config.json");
        }
        throw new EdgeLmException(path + ": not a model (expected a .gguf file or a checkpoint folder)");
    }

    private static Resolved hub(String name, HubRepoId id, Options options) {
        HubClient client = HubClient.fromEnvironment(options.env(), options.progress());
        Path repoFolder = client.repoFolder(id);
        Optional<Path> cached = cachedSnapshot(repoFolder, id.revision());
        if (options.checkpoint()) {
            if (cached.isPresent() && hasWeights(cached.get())) {
                return used(checkpointFolder(name, cached.get(), id), repoFolder);
            }
            if (options.isOffline()) {
                throw offlineMissing(id, cached.isPresent() ? "its weights (safetensors) were deleted after conversion"
                        : "it is not in the cache");
            }
            Path snapshot = download(client, id, cached);
            return used(checkpointFolder(name, snapshot, id), repoFolder);
        }
        if (cached.isPresent()) {
            Optional<Path> gguf = converted(cached.get(), options.quant());
            if (gguf.isPresent()) {
                return used(gguf(name, gguf.get(), id), repoFolder);
            }
            if (hasWeights(cached.get())) {
                return used(convert(name, id, cached.get(), options), repoFolder);
            }
        }
        if (options.isOffline()) {
            throw offlineMissing(id, cached.isEmpty() ? "it is not in the cache"
                    : "the cache holds no " + quantOf(options) + " file of it");
        }
        Path snapshot = download(client, id, cached);
        Optional<Path> gguf = converted(snapshot, options.quant());
        if (gguf.isPresent() && !hasWeights(snapshot)) {
            return used(gguf(name, gguf.get(), id), repoFolder);
        }
        return used(convert(name, id, snapshot, options), repoFolder);
    }

    /**
     * {@code edgelm pull}: asks the Hub for the revision's current commit, downloads and converts what is missing
     * (the requested quantisation, int8 by default), and returns the converted file. Needs the network.
     */
    public static Resolved pull(String name, Options options) {
        HubRepoId id = HubRepoId.parse(name).orElseThrow(() -> new EdgeLmException(name
                + ": not a Hugging Face model id (owner/name[@revision], e.g. Qwen/Qwen3.5-0.8B)"));
        if (options.isOffline()) {
            throw new EdgeLmException("pull needs the network, and --offline or HF_HUB_OFFLINE is set; models already in "
                    + "the cache: edgelm list");
        }
        HubClient client = HubClient.fromEnvironment(options.env(), options.progress());
        Path repoFolder = client.repoFolder(id);
        String quant = quantOf(options);
        String commit;
        try {
            commit = client.list(id).commit();
        } catch (HubClient.NetworkException e) {
            throw unreachable(new HubUnreachableException(client.endpoint(), e.getMessage()), id);
        }
        Path snapshot = repoFolder.resolve("snapshots").resolve(commit);
        Path gguf = snapshot.resolve(SnapshotGguf.fileName(QuantRecipe.parse(quant)));
        if (Files.isRegularFile(gguf) && !(options.keepCheckpoint() && !hasWeights(snapshot))) {
            writeRef(repoFolder, id.revision(), commit);
            note(options, id + " is up to date (" + commit.substring(0, 7) + ")");
            return used(gguf(name, gguf, id), repoFolder);
        }
        Path downloaded = download(client, id, Optional.empty());
        if (Files.isRegularFile(gguf) && downloaded.equals(snapshot)) {
            return used(gguf(name, gguf, id), repoFolder);
        }
        return used(convert(name, id, downloaded, options.withQuant(quant)), repoFolder);
    }

    private static Path download(HubClient client, HubRepoId id, Optional<Path> cached) {
        try {
            return client.download(id);
        } catch (HubUnreachableException e) {
            throw unreachable(e, id);
        }
    }

    private static EdgeLmException unreachable(HubUnreachableException e, HubRepoId id) {
        return new EdgeLmException(e.getMessage() + ", and " + id + " is not in the cache yet. Ways out: "
                + "a local model (edgelm run model.gguf, or a checkpoint folder); a Hub mirror (HF_ENDPOINT=https://...); "
                + "the models already downloaded (edgelm list); or the tiny test model, which needs no download: "
                + "edgelm run src/test/resources/fixtures/qwen35/tiny-chat \"Hi\"", e);
    }

    private static EdgeLmException offlineMissing(HubRepoId id, String why) {
        return new EdgeLmException("offline (--offline or HF_HUB_OFFLINE), and " + id + " cannot be used from the cache: "
                + why + ". Download it once with network (edgelm pull " + id + "), or see what is there: edgelm list");
    }

    private static Resolved convert(String name, HubRepoId id, Path snapshot, Options options) {
        QuantRecipe recipe = QuantRecipe.parse(quantOf(options));
        Path target = snapshot.resolve(SnapshotGguf.fileName(recipe));
        PrintStream out = options.progress();
        if (!Files.isRegularFile(target)) {
            note(options, "converting " + id + " to an " + recipe.cliName() + " GGUF file (once): " + target);
        }
        ProgressBar[] bar = new ProgressBar[1];
        Path gguf;
        try {
            gguf = SnapshotGguf.of(snapshot, recipe, w -> note(options, "warning: " + w), (tensor, done, total) -> {
                if (bar[0] == null) {
                    bar[0] = ProgressBar.bytes(out, "converting", total, 0);
                }
                bar[0].set(done);
            });
        } finally {
            if (bar[0] != null) {
                bar[0].close();
            }
        }
        if (!options.keepCheckpoint()) {
            long freed = deleteWeights(snapshot);
            if (freed > 0) {
                note(options, "deleted the downloaded safetensors (" + Bytes.format(freed) + "; --keep-checkpoint keeps them)");
            }
        }
        return gguf(name, gguf, id);
    }

    /** The converted file of a snapshot: the one asked for, or int8, int4, bf16 in that order when none is. */
    static Optional<Path> converted(Path snapshot, String quant) {
        if (quant != null) {
            Path p = snapshot.resolve(SnapshotGguf.fileName(QuantRecipe.parse(quant)));
            return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
        }
        for (QuantRecipe r : new QuantRecipe[] {QuantRecipe.INT8, QuantRecipe.INT4, QuantRecipe.BF16}) {
            Path p = snapshot.resolve(SnapshotGguf.fileName(r));
            if (Files.isRegularFile(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static String quantOf(Options options) {
        return options.quant() != null ? options.quant().toLowerCase(Locale.ROOT) : DEFAULT_QUANT.cliName();
    }

    static boolean hasWeights(Path snapshot) {
        try (Stream<Path> files = Files.list(snapshot)) {
            return files.anyMatch(p -> p.getFileName().toString().endsWith(".safetensors"));
        } catch (IOException e) {
            return false;
        }
    }

    /** Deletes a snapshot's safetensors and their index; returns the bytes freed. */
    static long deleteWeights(Path snapshot) {
        long freed = 0;
        try (Stream<Path> files = Files.list(snapshot)) {
            for (Path p : files.toList()) {
                String n = p.getFileName().toString();
                if (n.endsWith(".safetensors") || n.endsWith(".safetensors.index.json")) {
                    freed += Files.size(p);
                    Files.delete(p);
                }
            }
        } catch (IOException e) {
            throw new EdgeLmException("cannot delete the safetensors in " + snapshot + ": " + e.getMessage());
        }
        return freed;
    }

    /** The snapshot a revision resolved to when it was last downloaded whole ({@code refs/<revision>}). */
    static Optional<Path> cachedSnapshot(Path repoFolder, String revision) {
        try {
            Path snapshots = repoFolder.resolve("snapshots");
            if (revision.matches("[0-9a-fA-F]{40}") && Files.isDirectory(snapshots.resolve(revision.toLowerCase(Locale.ROOT)))) {
                return Optional.of(snapshots.resolve(revision.toLowerCase(Locale.ROOT)));
            }
            Path ref = repoFolder.resolve("refs").resolve(revision);
            if (Files.isRegularFile(ref)) {
                Path snapshot = snapshots.resolve(Files.readString(ref).strip());
                if (Files.isDirectory(snapshot)) {
                    return Optional.of(snapshot);
                }
            }
        } catch (IOException | InvalidPathException e) {
            // no usable cache entry
        }
        return Optional.empty();
    }

    private static void writeRef(Path repoFolder, String revision, String commit) {
        try {
            Path ref = repoFolder.resolve("refs").resolve(revision);
            Files.createDirectories(ref.getParent());
            dev.edgelm.util.AtomicFiles.write(ref, out -> out.write(commit.getBytes(StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new EdgeLmException("cannot write to the cache folder " + repoFolder + ": " + e.getMessage());
        }
    }

    /** Marks when a cached model was last used (for {@code edgelm list}); a cache that cannot be written is no error. */
    private static Resolved used(Resolved r, Path repoFolder) {
        try {
            Files.writeString(repoFolder.resolve(LAST_USED), java.time.Instant.now().toString());
        } catch (IOException e) {
            // read-only cache: nothing to record
        }
        return r;
    }

    private static void note(Options options, String message) {
        if (options.progress() != null) {
            options.progress().println("edgelm: " + message);
            options.progress().flush();
        }
    }

    private static Optional<Path> existing(String name) {
        try {
            Path p = Path.of(name);
            return Files.exists(p) ? Optional.of(p) : Optional.empty();
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    private static List<Path> ggufFiles(Path folder) {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(p -> Files.isRegularFile(p) && GgufFile.isGgufName(p)).sorted().toList();
        } catch (IOException e) {
            throw new EdgeLmException(folder + ": cannot list: " + e.getMessage());
        }
    }

    private static Resolved gguf(String name, Path path, HubRepoId repo) {
        try (GgufFile g = GgufFile.open(path)) {
            return new Resolved(name, path, Format.GGUF, quantisation(g), g.fileSize(), repo);
        }
    }

    private static Resolved checkpointFolder(String name, Path folder, HubRepoId repo) {
        String quant = "bf16";
        long bytes = 0;
        if (hasWeights(folder)) {
            Map<String, Long> byType = new HashMap<>();
            try (SafetensorsCheckpoint c = SafetensorsCheckpoint.open(folder)) {
                for (TensorView t : c.tensors().values()) {
                    byType.merge(t.dtype().toLowerCase(Locale.ROOT), t.data().byteSize(), Long::sum);
                }
            }
            quant = byType.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(quant);
        }
        try (Stream<Path> files = Files.list(folder)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                bytes += Files.size(p);
            }
        } catch (IOException e) {
            throw new EdgeLmException(folder + ": cannot list: " + e.getMessage());
        }
        return new Resolved(name, folder, Format.CHECKPOINT, quant, bytes, repo);
    }

    /**
     * The quantisation of a GGUF file: EdgeLM's recipe names for the file types its converter writes, llama.cpp's
     * names for the others ({@code general.file_type}); without that key, the type most matrices have.
     */
    public static String quantisation(GgufFile g) {
        Optional<Long> fileType = g.metadata().optLong("general.file_type");
        if (fileType.isPresent()) {
            String n = switch (fileType.get().intValue()) {
                case 0 -> "f32";
                case 1 -> "f16";
                case 2 -> "int4";
                case 3 -> "Q4_1";
                case 7 -> "int8";
                case 8 -> "Q5_0";
                case 9 -> "Q5_1";
                case 10 -> "Q2_K";
                case 11 -> "Q3_K_S";
                case 12 -> "Q3_K_M";
                case 13 -> "Q3_K_L";
                case 14 -> "Q4_K_S";
                case 15 -> "Q4_K_M";
                case 16 -> "Q5_K_S";
                case 17 -> "Q5_K_M";
                case 18 -> "Q6_K";
                case 32 -> "bf16";
                default -> null;
            };
            if (n != null) {
                return n;
            }
        }
        Map<String, Integer> counts = new HashMap<>();
        for (GgufTensorInfo t : g.tensorInfos().values()) {
            if (t.nDims() >= 2) {
                counts.merge(t.type().name(), 1, Integer::sum);
            }
        }
        return counts.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse("unknown");
    }

    /** Context length a model declares ({@code <arch>.context_length} or {@code max_position_embeddings}), or 0. */
    public static long contextLength(Resolved r) {
        try {
            if (r.format() == Format.GGUF) {
                try (GgufFile g = GgufFile.open(r.path())) {
                    String arch = g.metadata().optString("general.architecture").orElse("qwen35");
                    return g.metadata().optLong(arch + ".context_length").orElse(0L);
                }
            }
            JsonNode c = new ObjectMapper().readTree(r.path().resolve("config.json").toFile());
            JsonNode n = c.has("text_config") ? c.get("text_config").path("max_position_embeddings")
                    : c.path("max_position_embeddings");
            return n.asLong(0);
        } catch (IOException e) {
            return 0;
        }
    }
}
