package dev.edgelm.engine;

import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;

/** A library user's first call, run by {@code LauncherTest} in a JVM started without the Vector API module. */
public final class NoVectorProbe {
    private NoVectorProbe() {}

    public static void main(String[] args) {
        try (Engine engine = Engine.load(Path.of(args[0]), new EngineOptions(1, 64, 16))) {
            System.out.println("loaded " + engine.modelPath());
        } catch (EdgeLmException e) {
            System.out.println(e.getMessage());
            System.exit(3);
        }
    }
}
