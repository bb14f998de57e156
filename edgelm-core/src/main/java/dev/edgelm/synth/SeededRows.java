package dev.edgelm.synth;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Deterministic random rows: every row of every tensor has its own generator, seeded from (seed, tensor
 * name, row), so a row's values do not depend on which thread makes it or in what order.
 */
final class SeededRows {
    private static final double SQRT_3 = Math.sqrt(3);

    private SeededRows() {}

    /** The seed of a tensor: the run's seed mixed with a 64-bit hash (FNV-1a) of the tensor's name. */
    static long tensorSeed(long seed, String name) {
        long h = 0xcbf29ce484222325L;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return mix(mix(seed) ^ h);
    }

    /** The generator of row {@code r} of a tensor. */
    static SplittableRandom row(long tensorSeed, int r) {
        return new SplittableRandom(mix(tensorSeed + 0x9e3779b97f4a7c15L * (r + 1L)));
    }

    /**
     * Fills {@code dst[0, n)} with {@code mean + std * z}, z bell-shaped with mean 0 and variance 1: the sum
     * of four uniform 16-bit draws taken from one 64-bit value (Irwin-Hall), bounded by +-2 sqrt(3). Cheaper
     * than an exact normal by an order of magnitude, which matters for billions of weights.
     */
    static void fill(SplittableRandom rnd, float[] dst, int n, double mean, double std) {
        double scale = std * SQRT_3 / 65536.0; // 1 / standard deviation of the sum: sqrt(3) / 65536
        for (int i = 0; i < n; i++) {
            long bits = rnd.nextLong();
            long sum = (bits & 0xffff) + ((bits >>> 16) & 0xffff) + ((bits >>> 32) & 0xffff) + (bits >>> 48);
            // sum of four U{0..65535}: mean 2 * 65535, variance about 65536^2 / 3
            dst[i] = (float) (mean + (sum - 131070) * scale);
        }
    }

    /** Stafford's variant 13 of the MurmurHash3 finaliser (SplitMix64's output function). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
