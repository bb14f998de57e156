package dev.edgelm.cli;

/** The command line for tests outside this package: exit code of {@code edgelm ARGS}, output discarded. */
public final class CliRunnerAccess {
    private CliRunnerAccess() {}

    public static int run(String... args) {
        return CliRunner.run(args).exitCode();
    }
}
