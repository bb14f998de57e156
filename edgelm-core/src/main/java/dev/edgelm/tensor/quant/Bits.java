package dev.edgelm.tensor.quant;

/** Lane index table for the per-lane shifts that pick Q5_0 / Q5_1 fifth bits out of their 32-bit word. */
final class Bits {
    /** 0, 1, 2, ... 31: lane i of the vector for values [e, e + L) shifts the word by e + i. */
    static final int[] IOTA = new int[32];

    static {
        for (int i = 0; i < IOTA.length; i++) {
            IOTA[i] = i;
        }
    }

    private Bits() {}
}
