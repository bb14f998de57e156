package dev.edgelm.cli;

import dev.edgelm.util.BuildInfo;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.VectorSupport;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code edgelm} command line. {@code edgelm --help} lists the user commands first ({@code run} at the top) and
 * the developer tools after them ({@link #DEVELOPER_TOOLS}); a new command is one more entry in {@code subcommands}.
 */
@Command(
        name = "edgelm",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs Qwen3.5 models on the CPU.",
        footer = {"", "MODEL, wherever a command takes one: a .gguf file, a checkpoint folder, or a Hugging Face model id "
                + "(Qwen/Qwen3.5-0.8B, optionally @revision), downloaded once and then used from the cache.",
                "edgelm COMMAND --help shows a command's options. Shell completion: source <(edgelm generate-completion)"},
        subcommands = {RunCommand.class, ModelCommands.Pull.class, ModelCommands.ListCommand.class,
                ModelCommands.Remove.class, BenchmarkCommand.class, InspectCommand.class, ConvertCommand.class,
                TokenizeCommand.class, TemplateCommand.class, ScoreCommand.class, SynthCommand.class, EvalCommand.class,
                ServeCommand.class, BenchServeCommand.class,
                CommandLine.HelpCommand.class, AutoComplete.GenerateCompletion.class})
public final class Main implements Runnable {
    /** Listed under "Developer tools" in {@code edgelm --help}; every other command is a user command. */
    static final Set<String> DEVELOPER_TOOLS = Set.of("tokenize", "template", "score", "synth", "help");

    final ProcessContext context;

    /** With nothing on standard input and no terminal. */
    Main() {
        this(ProcessContext.none());
    }

    private Main(ProcessContext context) {
        this.context = context;
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        if (!VectorSupport.available()) {
            // java -jar edgelm.jar: the manifest cannot add a module, so start again with the flags bin/edgelm uses
            System.exit(Relaunch.withVectorApi(args));
        }
        System.exit(execute(args));
    }

    /** Runs the CLI and returns its exit code: user errors print one clear line and return 1 or 2. */
    public static int execute(String... args) {
        return execute(ProcessContext.system(), new java.io.PrintWriter(System.out, true), new java.io.PrintWriter(System.err, true), args);
    }

    /** As {@link #execute(String...)}, writing to the given streams (tests capture them), with nothing on standard input. */
    public static int execute(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        return execute(ProcessContext.none(), out, err, args);
    }

    static int execute(ProcessContext context, java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        CommandLine cli = args.length > 0 && args[0].equals("run") ? runOnly(context) : commandLine(context);
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof EdgeLmException) {
                commandLine.getErr().println("error: " + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cli.execute(args);
    }

    /** The command tree, with the grouped command list in its help. */
    static CommandLine commandLine(ProcessContext context) {
        CommandLine cli = new CommandLine(new Main(context));
        cli.setExpandAtFiles(false); // '@file' is ours: --tokens @ids.txt
        cli.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST_HEADING, help -> "");
        cli.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST, Main::groupedCommands);
        return cli;
    }

    /**
     * The tree with only {@code run} under the root, which {@code edgelm run ...} is parsed against: building every
     * command's model by reflection is about a third of a second of a fresh process, spent before the first
     * token of {@code edgelm run --server}. {@code run}'s help, errors and names are those of the full tree.
     */
    static CommandLine runOnly(ProcessContext context) {
        CommandLine.Model.CommandSpec root = CommandLine.Model.CommandSpec.wrapWithoutInspection(new Main(context));
        root.name("edgelm");
        CommandLine cli = new CommandLine(root);
        cli.addSubcommand("run", new RunCommand());
        cli.setExpandAtFiles(false); // '@file' is ours (after addSubcommand: the setting goes to the subcommands there)
        return cli;
    }

    /** "Commands:" (run first), then "Developer tools:". */
    private static String groupedCommands(CommandLine.Help help) {
        Map<String, CommandLine.Help> user = new LinkedHashMap<>();
        Map<String, CommandLine.Help> tools = new LinkedHashMap<>();
        java.util.Set<CommandLine.Model.CommandSpec> seen = new java.util.HashSet<>();
        help.subcommands().forEach((name, sub) -> {
            CommandLine.Model.CommandSpec spec = sub.commandSpec();
            if (!spec.usageMessage().hidden() && !spec.name().equals("generate-completion") && seen.add(spec)) {
                (DEVELOPER_TOOLS.contains(spec.name()) ? tools : user).put(name, sub);
            }
        });
        return "%nCommands:%n".formatted() + help.commandList(user)
                + "%nDeveloper tools:%n".formatted() + help.commandList(tools);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String vector = VectorSupport.available() ? ", Vector API " + BenchmarkJson.vectorBits() + "-bit" : "";
            return new String[] {"edgelm " + BuildInfo.version() + " (commit " + BuildInfo.commit() + "), Java "
                    + Runtime.version() + vector};
        }
    }
}
