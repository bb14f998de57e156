package dev.edgelm.vision;

import dev.edgelm.tensor.WeightMatrix;

/**
 * The vision tower's weights in one canonical form, whatever the file: matrices are views over the stored
 * bytes (the GGUF patch kernel excepted, see {@link VisionLoader}), vectors float32 copies.
 *
 * @param patchEmbed  [hidden, 3 * temporal * patch * patch]: the Conv3d kernel flattened as (channel, time, y, x)
 * @param positions   the learned position table [gridSide * gridSide, hidden], row-major
 */
public record VisionWeights(Linear patchEmbed, float[] positions, Block[] blocks, Norm mergerNorm, Linear mergerFc1,
                            Linear mergerFc2) {

    /** {@code y = x W^T + b}. */
    public record Linear(WeightMatrix weight, float[] bias) {
        public int in() {
            return weight.cols();
        }

        public int out() {
            return weight.rows();
        }
    }

    /** LayerNorm's affine part. */
    public record Norm(float[] weight, float[] bias) {}

    /** {@code x += proj(attn(norm1(x)))}, then {@code x += fc2(gelu_tanh(fc1(norm2(x))))}. */
    public record Block(Norm norm1, Linear qkv, Linear proj, Norm norm2, Linear fc1, Linear fc2) {}
}
