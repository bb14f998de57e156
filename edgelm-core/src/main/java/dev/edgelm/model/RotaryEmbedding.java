package dev.edgelm.model;

/**
 * Qwen3.5's partial, interleaved multimodal RoPE. Only the first {@code rotaryDim} dims of a head turn,
 * paired rotate-half style (dim i with i + rotaryDim/2). Frequency j reads the height position stream if
 * {@code j % 3 == 1 && j < 3 * section[1]}, the width stream if {@code j % 3 == 2 && j < 3 * section[2]},
 * else the temporal stream. For text the three streams are equal, which is plain 1-D RoPE.
 */
final class RotaryEmbedding {
    private final int half;
    private final float[] invFreq;
    private final int[] stream;

    RotaryEmbedding(Qwen35Config c) {
        int rotaryDim = c.rotaryDim();
        half = rotaryDim / 2;
        invFreq = new float[half];
        stream = new int[half];
        int[] section = c.mropeSection();
        for (int j = 0; j < half; j++) {
            // float32 exponent, as the reference computes base ** (arange(0, dim, 2) / dim)
            float exponent = (float) (2 * j) / rotaryDim;
            invFreq[j] = (float) (1.0 / Math.pow(c.ropeTheta(), exponent));
            if (section.length >= 3 && j % 3 == 1 && j < 3 * section[1]) {
                stream[j] = 1;
            } else if (section.length >= 3 && j % 3 == 2 && j < 3 * section[2]) {
                stream[j] = 2;
            } else {
                stream[j] = 0;
            }
        }
    }

    int half() {
        return half;
    }

    /** Fills {@code cos/sin[row * half ..]} for a token at the given (temporal, height, width) positions. */
    void angles(int row, int posT, int posH, int posW, float[] cos, float[] sin) {
        for (int j = 0; j < half; j++) {
            int p = stream[j] == 0 ? posT : stream[j] == 1 ? posH : posW;
            float angle = p * invFreq[j];
            cos[row * half + j] = (float) Math.cos(angle);
            sin[row * half + j] = (float) Math.sin(angle);
        }
    }

    /** Rotates the first rotaryDim dims of the head vector at {@code v[off..]}. */
    void rotate(float[] v, int off, float[] cos, float[] sin, int row) {
        int base = row * half;
        for (int j = 0; j < half; j++) {
            float c = cos[base + j];
            float s = sin[base + j];
            float x1 = v[off + j];
            float x2 = v[off + j + half];
            v[off + j] = x1 * c - x2 * s;
            v[off + j + half] = x2 * c + x1 * s;
        }
    }
}
