package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.hub.CachedModels;
import dev.edgelm.hub.ModelResolver;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** Model management: {@code pull}, {@code list}, {@code rm} (the Hub cache, {@code ~/.cache/edgelm/hub}). */
final class ModelCommands {
    private ModelCommands() {}

    @Command(name = "pull", mixinStandardHelpOptions = true, sortOptions = false,
            description = {"Download a model from the Hugging Face Hub (or update it to the revision's latest commit) "
                    + "and convert it once to a GGUF file; later commands use it from the cache without the network.",
                    "The downloaded safetensors are deleted after the conversion unless --keep-checkpoint."})
    static final class Pull implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ParentCommand
        Main main;

        @Parameters(index = "0", paramLabel = "NAME", description = "A Hugging Face model id: owner/name, optionally "
                + "@revision (a branch, tag or commit), e.g. Qwen/Qwen3.5-0.8B.")
        String name;

        @Option(names = "--quant", paramLabel = "Q", defaultValue = "int8",
                description = "int8 (the default, what 'edgelm run' uses), int4 or bf16.")
        String quant;

        @Option(names = "--keep-checkpoint", description = "Keep the safetensors (needed only to convert to another "
                + "quantisation without downloading again).")
        boolean keepCheckpoint;

        @Override
        public Integer call() {
            ModelResolver.Resolved r = ModelResolver.pull(name, ModelResolver.Options.defaults().withEnv(main.context.env())
                    .withQuant(quant).withKeepCheckpoint(keepCheckpoint).withProgress(System.err));
            PrintWriter out = spec.commandLine().getOut();
            out.println(name + ": " + r.describe());
            out.flush();
            return 0;
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List the models in the cache: name, revision, files, quantisations, size on disk, last used.")
    static final class ListCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ParentCommand
        Main main;

        @Option(names = "--json", description = "Print a JSON list instead of a table.")
        boolean json;

        @Override
        public Integer call() {
            List<CachedModels.Entry> entries = CachedModels.list(main.context.env());
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                ArrayNode a = new ObjectMapper().createArrayNode();
                for (CachedModels.Entry e : entries) {
                    ObjectNode o = a.addObject();
                    o.put("name", e.name());
                    o.put("revision", e.revision());
                    o.put("commit", e.commit());
                    e.files().forEach(o.putArray("files")::add);
                    e.quants().forEach(o.putArray("quantisations")::add);
                    o.put("bytes", e.bytes());
                    if (e.lastUsed() != null) {
                        o.put("last_used", e.lastUsed().toString());
                    } else {
                        o.putNull("last_used");
                    }
                    o.put("path", e.folder().toString());
                }
                out.println(a);
            } else if (entries.isEmpty()) {
                out.println("no models in the cache yet (edgelm pull NAME, or edgelm run NAME, downloads one)");
            } else {
                String format = "%-32s %-18s %5s  %-22s %10s  %s%n";
                out.printf(format, "NAME", "REVISION", "FILES", "QUANTISATIONS", "SIZE", "LAST USED");
                for (CachedModels.Entry e : entries) {
                    out.printf(format, e.name(), e.revision() + " (" + e.commit().substring(0, Math.min(7, e.commit().length())) + ")",
                            e.files().size(), e.quants().isEmpty() ? "-" : String.join(", ", e.quants()), Sizes.bytes(e.bytes()),
                            ago(e.lastUsed()));
                }
            }
            out.flush();
            return 0;
        }

        static String ago(Instant t) {
            if (t == null) {
                return "-";
            }
            Duration d = Duration.between(t, Instant.now());
            if (d.toMinutes() < 1) {
                return "just now";
            }
            if (d.toHours() < 1) {
                return d.toMinutes() + " min ago";
            }
            if (d.toDays() < 1) {
                return d.toHours() + " h ago";
            }
            return d.toDays() + " days ago";
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = "Remove a model from the cache: every revision of owner/name, or with @revision that one only.")
    static final class Remove implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ParentCommand
        Main main;

        @Parameters(paramLabel = "NAME", arity = "1..*", description = "owner/name[@revision], as 'edgelm list' shows it.")
        List<String> names;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            for (String name : names) {
                long freed = CachedModels.remove(name, main.context.env());
                out.println("removed " + name + " (" + Sizes.bytes(freed) + " freed)");
            }
            out.flush();
            return 0;
        }
    }
}
