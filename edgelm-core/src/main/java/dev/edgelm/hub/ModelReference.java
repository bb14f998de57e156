package dev.edgelm.hub;

import dev.edgelm.util.EdgeLmException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/** What a user names as MODEL: a local file or folder, or else a Hugging Face Hub id to download. */
public final class ModelReference {
    private ModelReference() {}

    /** The local path of {@code spec}, downloading it from the Hub (configured from the environment) if needed. */
    public static Path resolve(String spec) {
        return resolve(spec, HubClient::fromEnvironment);
    }

    public static Path resolve(String spec, Supplier<HubClient> hub) {
        try {
            Path local = Path.of(spec);
            if (Files.exists(local)) {
                return local;
            }
        } catch (InvalidPathException e) {
            // not a path on this system; maybe a Hub id
        }
        Optional<HubRepoId> id = HubRepoId.parse(spec);
        if (id.isEmpty()) {
            throw new EdgeLmException(spec + ": no such file or folder (nor a Hugging Face model id like owner/name)");
        }
        try {
            return hub.get().download(id.get());
        } catch (EdgeLmException e) {
            throw new EdgeLmException("'" + spec + "' is not a local file or folder, and downloading it from the Hub failed: "
                    + e.getMessage(), e);
        }
    }
}
