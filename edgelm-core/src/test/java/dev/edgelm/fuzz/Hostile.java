package dev.edgelm.fuzz;

import dev.edgelm.jinja.TemplateException;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The property every fuzz target checks: hostile input ends in a value or in EdgeLM's own error
 * ({@link EdgeLmException} and its subclasses, {@link TemplateException}). Anything else (an unchecked exception,
 * an {@link OutOfMemoryError}, a {@link StackOverflowError}) escapes to Jazzer, which reports it as a finding;
 * a hang is reported by libFuzzer's per-input timeout.
 */
final class Hostile {
    private Hostile() {}

    interface Action {
        void run() throws IOException;
    }

    /** Runs {@code action}; EdgeLM's own errors are the expected outcome of bad input, everything else escapes. */
    static void endsCleanly(Action action) {
        try {
            action.run();
        } catch (EdgeLmException | TemplateException expected) {
            if (expected.getMessage() == null || expected.getMessage().isBlank()) {
                throw new AssertionError("an error without a message", expected);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the fuzz harness could not write its temp file", e);
        }
    }

    private static Path dir;

    /** One scratch folder per JVM; targets overwrite their files in it on every input. */
    static synchronized Path scratch() {
        if (dir == null) {
            try {
                dir = Files.createTempDirectory("edgelm-fuzz");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            dir.toFile().deleteOnExit();
        }
        return dir;
    }

    static Path write(String name, byte[] bytes) throws IOException {
        Path p = scratch().resolve(name);
        Files.createDirectories(p.getParent());
        Files.write(p, bytes);
        return p;
    }
}
