package dev.edgelm.util;

/** EdgeLM's kernels use the Vector API, an incubator module the JVM resolves only when asked to. */
public final class VectorSupport {
    public static final String MODULE = "jdk.incubator.vector";

    private VectorSupport() {}

    /** Whether {@value #MODULE} is in the boot layer. */
    public static boolean available() {
        return ModuleLayer.boot().findModule(MODULE).isPresent();
    }

    /** Fails with one clear message naming the flag when the Vector API is missing (before any kernel class loads). */
    public static void require() {
        if (!available()) {
            throw new EdgeLmException(message());
        }
    }

    /** What to do when it is missing. */
    public static String message() {
        return "EdgeLM needs the Vector API: start Java with --add-modules " + MODULE
                + " (bin/edgelm does; in Maven Surefire or Gradle add it to the test JVM's arguments)";
    }
}
