package dev.edgelm.cli;

import dev.edgelm.util.Bytes;
import java.util.Locale;

/** Human-readable sizes (binary units: KiB, MiB, GiB) and counts. */
final class Sizes {
    private Sizes() {}

    static String bytes(long b) {
        return Bytes.format(b);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
