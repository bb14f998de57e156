package dev.edgelm.cli;

import java.util.Locale;

/** Human-readable sizes and counts. */
final class Sizes {
    private Sizes() {}

    static String bytes(long b) {
        if (b < 1024) {
            return b + " B";
        }
        String[] units = {"KB", "MB", "GB", "TB"};
        double v = b;
        int u = -1;
        do {
            v /= 1024;
            u++;
        } while (v >= 1024 && u < units.length - 1);
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
