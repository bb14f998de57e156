package dev.edgelm.tensor.quant;

/** C's float rounding as ggml's reference quantisers use it. */
final class Quantizing {
    private Quantizing() {}

    /** C {@code roundf}: nearest integer, halves away from zero (Java's Math.round rounds them up). */
    static int roundHalfAway(float v) {
        // |v| + 0.5 is exact in double for any float, so floor gives the right integer
        return (int) Math.copySign(Math.floor(Math.abs((double) v) + 0.5), v);
    }
}
