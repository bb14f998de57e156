package dev.edgelm.util;

import java.util.Locale;

/**
 * Sizes for people: binary multiples with their IEC names (1 MiB = 1024 x 1024 bytes), the way {@code ls -h}
 * and llama.cpp count a model file. Speeds of memory and networks that are quoted in decimal units (GB/s)
 * are formatted where they are printed, and say so.
 */
public final class Bytes {
    private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB"};

    private Bytes() {}

    /** {@code 806354944} -> {@code "769.0 MiB"}; below 1 KiB: {@code "512 B"}. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        double v = bytes;
        int u = -1;
        do {
            v /= 1024;
            u++;
        } while (v >= 1024 && u < UNITS.length - 1);
        return String.format(Locale.ROOT, v >= 100 ? "%.0f %s" : "%.1f %s", v, UNITS[u]);
    }
}
