package dev.edgelm.cli;

/** The command line for tests outside this package: exit code of {@code edgelm ARGS}, output shown on failure. */
public final class CliRunnerAccess {
    private CliRunnerAccess() {}

    public static int run(String... args) {
        CliRunner r = CliRunner.run(args);
        if (r.exitCode() != 0) {
            System.out.println(r.out() + r.err());
        }
        return r.exitCode();
    }
}
