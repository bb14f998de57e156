package dev.edgelm.cli;

import dev.edgelm.util.EdgeLmException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code edgelm} command line. */
@Command(
        name = "edgelm",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs Qwen3.5 models on the CPU.",
        subcommands = {ScoreCommand.class, TokenizeCommand.class, TemplateCommand.class, ConvertCommand.class,
                InspectCommand.class, BenchmarkCommand.class, SynthCommand.class, RunCommand.class, ServeCommand.class, BenchServeCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {
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
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
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
        CommandLine cli = new CommandLine(new Main(context));
        cli.setExpandAtFiles(false); // '@file' is ours: --tokens @ids.txt
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

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"edgelm " + (v == null ? "dev" : v) + " (Java " + Runtime.version() + ")"};
        }
    }
}
