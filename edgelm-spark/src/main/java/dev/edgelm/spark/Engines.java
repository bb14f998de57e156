package dev.edgelm.spark;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.template.ChatFormat;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One engine per executor JVM and model: loaded the first time a partition needs it, from a path every executor
 * can read, then shared by every partition (and task thread) that JVM runs.
 */
final class Engines {
    record Loaded(Engine engine, ChatFormat format) {}

    private static final ConcurrentHashMap<String, Loaded> LOADED = new ConcurrentHashMap<>();

    private Engines() {}

    static Loaded get(String model, int threads) {
        return LOADED.computeIfAbsent(model + "@" + threads, k -> {
            Path path = Path.of(model);
            EngineOptions options = EngineOptions.defaults();
            if (threads > 0) {
                options = options.withThreads(threads);
            }
            Loaded l = new Loaded(Engine.load(path, options), ChatFormat.load(path));
            Runtime.getRuntime().addShutdownHook(new Thread(l.engine()::close));
            return l;
        });
    }
}
