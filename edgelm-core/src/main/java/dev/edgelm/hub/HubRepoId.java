package dev.edgelm.hub;

import dev.edgelm.util.EdgeLmException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A model repository on the Hugging Face Hub: {@code owner/name}, optionally {@code @revision} (a branch,
 * tag or commit; default {@code main}).
 */
public record HubRepoId(String owner, String name, String revision) {
    public static final String DEFAULT_REVISION = "main";

    private static final Pattern ID = Pattern.compile(
            "([A-Za-z0-9][A-Za-z0-9._-]*)/([A-Za-z0-9][A-Za-z0-9._-]*)(?:@([A-Za-z0-9._/-]+))?");

    public HubRepoId {
        if (!ID.matcher(owner + "/" + name).matches()) {
            throw new EdgeLmException("'" + owner + "/" + name + "' is not a Hugging Face model id (owner/name)");
        }
        if (revision == null || revision.isEmpty() || revision.contains("..")) {
            throw new EdgeLmException("'" + revision + "' is not a valid revision");
        }
    }

    /** Parses {@code owner/name[@revision]}; empty when {@code spec} does not have that shape. */
    public static Optional<HubRepoId> parse(String spec) {
        Matcher m = ID.matcher(spec);
        if (!m.matches() || spec.contains("..") || m.group(2).endsWith(".git")) {
            return Optional.empty();
        }
        return Optional.of(new HubRepoId(m.group(1), m.group(2), m.group(3) != null ? m.group(3) : DEFAULT_REVISION));
    }

    /** {@code owner/name}. */
    public String id() {
        return owner + "/" + name;
    }

    @Override
    public String toString() {
        return DEFAULT_REVISION.equals(revision) ? id() : id() + "@" + revision;
    }
}
