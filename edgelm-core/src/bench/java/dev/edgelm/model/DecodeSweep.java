package dev.edgelm.model;

import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.ReadBandwidth;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Where a decode step's weight traffic stands against the read loops, in one JVM, alternating: every matrix of a
 * model once with one token through the pool (the layers' matrices and the head apart), the pool's own read loop
 * over the same bytes, the plain Java loop, and the round trip of an empty parallel section. GB/s of matrix bytes,
 * best of {@code passes} per round. Run with the jar on the class path:
 * {@code java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp edgelm.jar:bench-classes
 * dev.edgelm.model.DecodeSweep MODEL.gguf THREADS ROUNDS}.
 */
public final class DecodeSweep {
    public static void main(String[] a) throws Exception {
        Path file = Path.of(a[0]);
        int threads = Integer.parseInt(a[1]);
        int rounds = a.length > 2 ? Integer.parseInt(a[2]) : 3;
        boolean prefillFirst = a.length > 3 && Boolean.parseBoolean(a[3]);
        try (Qwen35Model model = ModelLoader.load(file, threads); Parallel pool = new Parallel(threads);
                Parallel one = new Parallel(1)) {
            List<WeightMatrix> all = model.weights().matrices();
            WeightMatrix head = model.weights().lmHead();
            List<WeightMatrix> layers = new ArrayList<>();
            for (WeightMatrix m : all) {
                if (m != head && m != model.weights().embedTokens()) {
                    layers.add(m);
                }
            }
            Map<Integer, float[]> xs = new HashMap<>();
            Random r = new Random(1);
            int maxRows = 0;
            for (WeightMatrix m : all) {
                maxRows = Math.max(maxRows, m.rows());
                xs.computeIfAbsent(m.cols(), c -> {
                    float[] x = new float[c];
                    for (int i = 0; i < c; i++) {
                        x[i] = (float) r.nextGaussian();
                    }
                    return x;
                });
            }
            float[] out = new float[maxRows];
            List<MemorySegment> segs = new ArrayList<>();
            for (WeightMatrix m : layers) {
                segs.add(m.storage());
            }
            segs.add(head.storage());
            int[] prompt = new int[64];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = 1000 + 7 * i;
            }
            float[] logits = new float[model.config().vocabSize()];
            if (prefillFirst) {
                decode(model, prompt, logits, 4);
            }
            for (int w = 0; w < 3; w++) {
                sweep(pool, layers, xs, out);
                sweep(pool, List.of(head), xs, out);
            }
            for (int round = 0; round < rounds; round++) {
                double lay = best(() -> sweep(pool, layers, xs, out), 3);
                double hd = best(() -> sweep(pool, List.of(head), xs, out), 3);
                double lay1 = best(() -> sweep(one, layers, xs, out), 2);
                double rb = ReadBandwidth.bytesPerSecond(pool, segs, 3) / 1e9;
                double plain = ReadBandwidth.plainLoopBytesPerSecond(threads, 1L << 30, 3) / 1e9;
                double section = emptySection(pool);
                double steps = decode(model, prompt, logits, 32);
                System.out.printf("round %d: layers %.1f GB/s (1 thread %.1f), head %.1f, pool read loop %.1f, plain Java loop %.1f,"
                        + " empty section %.2f us; model decode %.2f tok/s = %.1f GB/s%n", round, lay, lay1, hd, rb, plain,
                        section, steps, steps * model.weights().decodeBytesPerToken() / 1e9);
            }
        }
    }

    /** A 64-token prefill, then {@code steps} greedy-free decode steps (token ids fixed); decode steps per second. */
    static double decode(Qwen35Model model, int[] prompt, float[] logits, int steps) {
        SequenceState state = model.newState(prompt.length + steps + 1);
        model.forwardLast(state, prompt, 0, prompt.length, logits);
        int[] t = {prompt[prompt.length - 1]};
        long t0 = System.nanoTime();
        for (int i = 0; i < steps; i++) {
            t[0] = 3000 + 11 * i;
            model.forwardLast(state, t, 0, 1, logits);
        }
        return steps / ((System.nanoTime() - t0) * 1e-9);
    }

    interface Sweep {
        double run();
    }

    static double best(Sweep s, int n) {
        double b = 0;
        for (int i = 0; i < n; i++) {
            b = Math.max(b, s.run());
        }
        return b;
    }

    /** GB/s of one pass over {@code ms}. */
    static double sweep(Parallel pool, List<WeightMatrix> ms, Map<Integer, float[]> xs, float[] out) {
        long bytes = 0;
        long t0 = System.nanoTime();
        for (WeightMatrix m : ms) {
            m.matmul(pool, xs.get(m.cols()), 1, out);
            bytes += m.byteSize();
        }
        return bytes / ((System.nanoTime() - t0) * 1e-9) / 1e9;
    }

    /** Microseconds per section of two indices doing nothing, back to back. */
    static double emptySection(Parallel pool) {
        long[] sink = new long[2];
        for (int i = 0; i < 20_000; i++) {
            pool.forRange(2, (s, e) -> sink[s]++);
        }
        long t0 = System.nanoTime();
        int n = 50_000;
        for (int i = 0; i < n; i++) {
            pool.forRange(2, (s, e) -> sink[s]++);
        }
        return (System.nanoTime() - t0) / 1e3 / n;
    }
}
