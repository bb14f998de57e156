package dev.edgelm.bench;

import dev.edgelm.tensor.ReadBandwidth;
import java.nio.file.Path;
import java.util.Map;

/**
 * The two reference read loops that decode is compared with, measured one after the other on the same
 * number of threads: the native tool ({@link NativeReadLoop}) and the plain Java loop
 * ({@link ReadBandwidth#plainLoopBytesPerSecond}), each over its own fresh buffer of the same size.
 */
public final class ReadLoops {
    /** Passes of each loop; the fastest counts. */
    static final int PASSES = 10;

    private ReadLoops() {}

    /** The native figure (or why there is none) and the plain Java one, in bytes per second. */
    public record Figures(NativeReadLoop.Result nativeLoop, double javaBytesPerSecond, long bufferBytes) {}

    public static Figures measure(Map<String, String> env, Path cacheDir, int threads, long mib) {
        NativeReadLoop.Result c = NativeReadLoop.measure(env, cacheDir, threads, mib, PASSES);
        double java = ReadBandwidth.plainLoopBytesPerSecond(threads, mib << 20, PASSES);
        return new Figures(c, java, mib << 20);
    }
}
