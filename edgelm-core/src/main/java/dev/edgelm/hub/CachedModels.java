package dev.edgelm.hub;

import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** The models in the cache ({@code edgelm list}) and their removal ({@code edgelm rm}). */
public final class CachedModels {
    private CachedModels() {}

    /**
     * One cached revision of a model.
     *
     * @param name      {@code owner/name}
     * @param revision  the revision asked for when it was downloaded ({@code main}, a tag, a commit)
     * @param commit    the commit it resolved to
     * @param files     the files of the snapshot
     * @param quants    the converted GGUF files' quantisations ({@code int8}, ...), and {@code checkpoint} when the
     *                  safetensors are kept
     * @param bytes     the snapshot's size on disk
     * @param lastUsed  when a command last used the model, or null
     * @param folder    the snapshot folder
     */
    public record Entry(String name, String revision, String commit, List<String> files, List<String> quants, long bytes,
                        Instant lastUsed, Path folder) {}

    /** Every complete revision in the cache of {@code env} ({@code EDGELM_CACHE}), by name. */
    public static List<Entry> list(Map<String, String> env) {
        Path hub = HubClient.defaultCache(env).resolve("hub");
        List<Entry> entries = new ArrayList<>();
        if (!Files.isDirectory(hub)) {
            return entries;
        }
        try (Stream<Path> repos = Files.list(hub)) {
            for (Path repo : repos.filter(Files::isDirectory).sorted().toList()) {
                String folderName = repo.getFileName().toString();
                if (!folderName.startsWith("models--") || folderName.indexOf("--", 8) < 0) {
                    continue;
                }
                String rest = folderName.substring(8);
                int cut = rest.indexOf("--");
                String name = rest.substring(0, cut) + "/" + rest.substring(cut + 2);
                Instant lastUsed = lastUsed(repo);
                Path refs = repo.resolve("refs");
                if (!Files.isDirectory(refs)) {
                    continue;
                }
                try (Stream<Path> refFiles = Files.walk(refs)) {
                    for (Path ref : refFiles.filter(Files::isRegularFile).sorted().toList()) {
                        String revision = refs.relativize(ref).toString().replace('\\', '/');
                        String commit = Files.readString(ref).strip();
                        Path snapshot = repo.resolve("snapshots").resolve(commit);
                        if (Files.isDirectory(snapshot)) {
                            entries.add(entry(name, revision, commit, snapshot, lastUsed));
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new EdgeLmException("cannot read the cache folder " + hub + ": " + e.getMessage());
        }
        return entries;
    }

    private static Entry entry(String name, String revision, String commit, Path snapshot, Instant lastUsed) throws IOException {
        List<String> files = new ArrayList<>();
        List<String> quants = new ArrayList<>();
        long bytes = 0;
        boolean weights = false;
        try (Stream<Path> list = Files.list(snapshot)) {
            for (Path p : list.filter(Files::isRegularFile).sorted().toList()) {
                String n = p.getFileName().toString();
                if (n.endsWith(".part")) {
                    continue;
                }
                files.add(n);
                bytes += Files.size(p);
                if (n.startsWith("edgelm-") && n.endsWith(".gguf")) {
                    quants.add(n.substring("edgelm-".length(), n.length() - ".gguf".length()));
                }
                weights |= n.endsWith(".safetensors");
            }
        }
        quants.sort(Comparator.naturalOrder());
        if (weights) {
            quants.add("checkpoint");
        }
        return new Entry(name, revision, commit, files, quants, bytes, lastUsed, snapshot);
    }

    private static Instant lastUsed(Path repo) {
        try {
            Path f = repo.resolve(ModelResolver.LAST_USED);
            return Files.isRegularFile(f) ? Instant.parse(Files.readString(f).strip()) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Removes a model from the cache: every revision of {@code owner/name}, or with {@code @revision} that revision
     * only. Returns the bytes freed; fails when the model is not in the cache.
     */
    public static long remove(String name, Map<String, String> env) {
        HubRepoId id = HubRepoId.parse(name).orElseThrow(() -> new EdgeLmException(name
                + ": not a Hugging Face model id (owner/name[@revision]); edgelm list shows the cached models"));
        Path hub = HubClient.defaultCache(env).resolve("hub");
        Path repo = hub.resolve("models--" + id.owner() + "--" + id.name());
        if (!Files.isDirectory(repo)) {
            throw new EdgeLmException(id.id() + " is not in the cache (" + hub + "); edgelm list shows what is");
        }
        boolean whole = !name.contains("@");
        if (whole) {
            return deleteTree(repo);
        }
        Optional<Path> snapshot = ModelResolver.cachedSnapshot(repo, id.revision());
        if (snapshot.isEmpty()) {
            throw new EdgeLmException(id + " is not in the cache; edgelm list shows what is");
        }
        long freed = deleteTree(snapshot.get());
        try {
            Files.deleteIfExists(repo.resolve("refs").resolve(id.revision()));
        } catch (IOException e) {
            throw new EdgeLmException("cannot delete " + repo.resolve("refs").resolve(id.revision()) + ": " + e.getMessage());
        }
        return freed;
    }

    private static long deleteTree(Path root) {
        long freed = 0;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isRegularFile(p)) {
                    freed += Files.size(p);
                }
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new EdgeLmException("cannot delete " + root + ": " + e.getMessage());
        }
        return freed;
    }
}
