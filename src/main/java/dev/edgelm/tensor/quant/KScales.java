package dev.edgelm.tensor.quant;

/**
 * The packed sub-block scales of the k-quant super-blocks (ggml's {@code get_scale_min_k4} and Q3_K's),
 * read from the 12 scale bytes held as {@code lo} (bytes 0..7) and {@code hi} (bytes 8..11).
 */
final class KScales {
    private KScales() {}

    /**
     * Scale of sub-block {@code j} (0..7) of a Q4_K / Q5_K block: 6 bits, the low 6 of byte j for j < 4,
     * else the low nibble of byte j + 4 with the top 2 bits of byte j - 4.
     */
    static int scale(long lo, int hi, int j) {
        if (j < 4) {
            return (int) (lo >>> 8 * j) & 63;
        }
        return (hi >>> 8 * (j - 4)) & 0xF | ((int) (lo >>> 8 * (j - 4) + 6) & 3) << 4;
    }

    /**
     * Min of sub-block {@code j} (0..7): the low 6 bits of byte j + 4 for j < 4, else the high nibble of
     * byte j + 4 with the top 2 bits of byte j.
     */
    static int min(long lo, int hi, int j) {
        if (j < 4) {
            return (int) (lo >>> 8 * (j + 4)) & 63;
        }
        return (hi >>> 8 * (j - 4) + 4) & 0xF | ((int) (lo >>> 8 * j + 6) & 3) << 4;
    }

    /**
     * Signed scale of sub-block {@code j} (0..15) of a Q3_K block: the low nibble of byte j (j < 8) or the
     * high nibble of byte j - 8, with bits 2(j/4)..2(j/4)+1 of byte 8 + j%4 on top, minus 32.
     */
    static int q3Scale(long lo, int hi, int j) {
        int low = (int) (lo >>> 8 * (j % 8) + 4 * (j / 8)) & 0xF;
        int high = (hi >>> 8 * (j % 4) + 2 * (j / 4)) & 3;
        return (low | high << 4) - 32;
    }
}
