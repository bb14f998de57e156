package dev.edgelm.cli;

import java.io.ByteArrayInputStream;
import dev.edgelm.util.EdgeLmException;
import dev.edgelm.util.Limits;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import dev.edgelm.util.Console;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;

/**
 * What the process was started with besides its arguments: standard input, whether standard input and output
 * are terminals, how to open the terminal for an interactive chat, and the environment variables. Tests give
 * their own.
 *
 * @param stdin            standard input
 * @param stdinIsTerminal  whether a person types into standard input (then it is not read as piped text)
 * @param stdoutIsTerminal whether standard output shows on a terminal (then styles such as dim text are used)
 * @param terminal         opens the terminal for an interactive chat
 * @param env              environment variables ({@code HF_ENDPOINT}, {@code HF_TOKEN}, {@code EDGELM_CACHE})
 * @param stderrIsTerminal whether standard error shows on a terminal (then progress is redrawn in place)
 */
record ProcessContext(InputStream stdin, boolean stdinIsTerminal, boolean stdoutIsTerminal, TerminalOpener terminal,
                      Map<String, String> env, boolean stderrIsTerminal) {

    ProcessContext(InputStream stdin, boolean stdinIsTerminal, boolean stdoutIsTerminal, TerminalOpener terminal,
                   Map<String, String> env) {
        this(stdin, stdinIsTerminal, stdoutIsTerminal, terminal, env, false);
    }

    /** Whether escape codes may be written: on a terminal, unless {@code NO_COLOR} is set. */
    boolean stdoutStyled() {
        return stdoutIsTerminal && Console.colorAllowed(env);
    }

    boolean stderrStyled() {
        return stderrIsTerminal && Console.colorAllowed(env);
    }

    @FunctionalInterface
    interface TerminalOpener {
        Terminal open() throws IOException;
    }

    /** The process's own: a system terminal when there is one, a dumb one otherwise. */
    static ProcessContext system() {
        return new ProcessContext(System.in, isatty(0).orElse(System.console() != null),
                isatty(1).orElse(System.console() != null),
                () -> TerminalBuilder.builder().system(true).dumb(true).build(), System.getenv(),
                Console.stderrIsTerminal(System.getenv()));
    }

    /** No input, no terminal, the process's environment (the in-process runs of tests). */
    static ProcessContext none() {
        return piped(new byte[0]);
    }

    /** {@code input} piped into standard input; output is not a terminal. */
    static ProcessContext piped(byte[] input) {
        return new ProcessContext(new ByteArrayInputStream(input), false, false, () -> {
            throw new IOException("no terminal");
        }, System.getenv());
    }

    ProcessContext withEnv(Map<String, String> variables) {
        return new ProcessContext(stdin, stdinIsTerminal, stdoutIsTerminal, terminal, Map.copyOf(variables), stderrIsTerminal);
    }

    /** How long {@link #readPiped(boolean)} waits for the first byte of input that is optional. */
    static final long OPTIONAL_INPUT_WAIT_MS = 300;

    /**
     * What is piped into standard input, or empty when it is a terminal. When the input is {@code optional} (the
     * command has its text already), it is read only if it has data within {@value #OPTIONAL_INPUT_WAIT_MS} ms, so
     * an open pipe nobody writes to, {@code /dev/null} or a device does not hold the command; otherwise it is read to
     * its end. At most {@link Limits#stdinBytes()} bytes: more (say, {@code < /dev/zero}) is an error.
     */
    Optional<byte[]> readPiped(boolean optional) {
        if (stdinIsTerminal) {
            return Optional.empty();
        }
        try {
            if (optional && !hasDataWithin(OPTIONAL_INPUT_WAIT_MS)) {
                return Optional.empty();
            }
            int limit = Limits.stdinBytes();
            byte[] bytes = stdin.readNBytes(limit + 1);
            if (bytes.length > limit) {
                throw new EdgeLmException("standard input holds more than " + limit + " bytes (the limit edgelm.limit.stdin; "
                        + "EDGELM_JAVA_OPTS=-Dedgelm.limit.stdin=N raises it)");
            }
            return Optional.of(bytes);
        } catch (IOException e) {
            throw new EdgeLmException("cannot read standard input: " + e.getMessage());
        }
    }

    private boolean hasDataWithin(long millis) throws IOException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            if (stdin.available() > 0) {
                return true;
            }
            if (System.nanoTime() >= deadline) {
                return false;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** C's {@code isatty(fd)}, or empty where it cannot be called. */
    private static Optional<Boolean> isatty(int fd) {
        return Console.isatty(fd);
    }
}
