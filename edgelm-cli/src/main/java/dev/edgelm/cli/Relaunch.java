package dev.edgelm.cli;

import dev.edgelm.util.VectorSupport;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code java -jar edgelm.jar ...} without {@code --add-modules jdk.incubator.vector}: a jar's manifest can open
 * packages and enable native access but not add a module, so the process starts the same Java once more with the
 * flags {@code bin/edgelm} passes, and exits with its exit code. Where that is impossible it prints one line
 * naming the flag.
 */
final class Relaunch {
    static final String GUARD = "EDGELM_RELAUNCHED";

    private Relaunch() {}

    static int withVectorApi(String[] args) {
        Optional<String> java = ProcessHandle.current().info().command();
        if (System.getenv(GUARD) != null || java.isEmpty() || !Files.isExecutable(Path.of(java.get()))) {
            System.err.println("error: EdgeLM needs the Vector API: run java --add-modules " + VectorSupport.MODULE
                    + " -jar edgelm.jar ... (or bin/edgelm, which adds it)");
            return 1;
        }
        List<String> command = new ArrayList<>();
        command.add(java.get());
        command.add("--add-modules");
        command.add(VectorSupport.MODULE);
        command.add("--enable-native-access=ALL-UNNAMED");
        List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
        if (jvmArgs.stream().noneMatch(a -> a.startsWith("-Xm") || a.startsWith("-XX:+Use"))) {
            command.addAll(List.of("-XX:+UseSerialGC", "-XX:+UseCountedLoopSafepoints", "-XX:LoopStripMiningIter=1000",
                    "-Xms64m", "-Xmn32m")); // as bin/edgelm (loop strip mining: see there)
        }
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.INHERIT)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put(GUARD, "1");
        // the child's standard error comes through here, without the JVM's incubator-module warning (see bin/edgelm)
        pb.environment().put("EDGELM_STDERR_TERMINAL", dev.edgelm.util.Console.stderrIsTerminal(System.getenv()) ? "1" : "0");
        ignoreInterrupts(); // Ctrl+C is for the child (it stops a reply); this process waits for it to end
        try {
            Process p = pb.start();
            Thread copy = Thread.ofPlatform().daemon().start(() -> copyStderr(p.getErrorStream()));
            int code = p.waitFor();
            copy.join(1000);
            return code;
        } catch (IOException e) {
            System.err.println("error: " + VectorSupport.message() + " (starting Java again failed: " + e.getMessage() + ")");
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }

    /** Copies the child's standard error as it comes, dropping a first line that is the incubator warning. */
    private static void copyStderr(java.io.InputStream in) {
        try (in) {
            byte[] warning = "WARNING: Using incubator modules".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            java.io.ByteArrayOutputStream first = new java.io.ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                first.write(b);
            }
            byte[] line = first.toByteArray();
            if (!java.util.Arrays.equals(line, 0, Math.min(line.length, warning.length), warning, 0, warning.length)) {
                System.err.write(line);
                if (b == '\n') {
                    System.err.write('\n');
                }
            }
            System.err.flush();
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) > 0) {
                System.err.write(buffer, 0, n);
                System.err.flush();
            }
        } catch (IOException e) {
            // the child has gone
        }
    }

    @SuppressWarnings("restriction")
    private static void ignoreInterrupts() {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> { });
        } catch (Throwable e) {
            // no signal handling here: the default applies
        }
    }
}
