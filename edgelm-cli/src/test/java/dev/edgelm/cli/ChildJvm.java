package dev.edgelm.cli;

import java.util.ArrayList;
import java.util.List;

/** The command line of the {@code edgelm} CLI in a separate JVM, on this test run's class path. */
final class ChildJvm {
    private ChildJvm() {}

    static List<String> edgelm(String... args) {
        return edgelmWithHeap("512m", args);
    }

    /** With a maximum heap of {@code heap} (e.g. "64m"). */
    static List<String> edgelmWithHeap(String heap, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-Xmx" + heap, "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }
}
