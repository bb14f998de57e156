package dev.edgelm.synth;

import dev.edgelm.model.Qwen35Config;
import dev.edgelm.util.EdgeLmException;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The shape of a Qwen3.5 text decoder to synthesise. What all Qwen3.5 sizes share is fixed here: full
 * attention at every 4th layer, rotary on a quarter of each head (theta 10^7), M-RoPE sections in the
 * released proportions, conv kernel 4, RMSNorm epsilon 10^-6, equal linear key and value head dims.
 *
 * @param size           the name {@code synth --size} takes
 * @param modelName      the released model this shape is
 * @param firstSpecialId id of {@code <|endoftext|>}, the first of the special tokens (248044 as released)
 */
public record SynthShape(
        String size,
        String modelName,
        int hiddenSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int linearKeyHeads,
        int linearValueHeads,
        int linearHeadDim,
        int intermediateSize,
        int vocabSize,
        boolean tiedEmbeddings,
        int firstSpecialId) {

    static final int FULL_ATTENTION_INTERVAL = 4;
    static final int CONV_KERNEL = 4;
    static final double ROPE_THETA = 10_000_000;
    static final float RMS_NORM_EPS = 1e-6f;
    static final long CONTEXT_LENGTH = 262_144;

    /** The released text decoders (the models' {@code config.json}); vocabulary 248,320 rows, tied embeddings. */
    public static final List<SynthShape> RELEASED = List.of(
            new SynthShape("0.8b", "Qwen3.5-0.8B", 1024, 24, 8, 2, 256, 16, 16, 128, 3584, 248_320, true, 248_044),
            new SynthShape("2b", "Qwen3.5-2B", 2048, 24, 8, 2, 256, 16, 16, 128, 6144, 248_320, true, 248_044),
            new SynthShape("4b", "Qwen3.5-4B", 2560, 32, 16, 4, 256, 16, 32, 128, 9216, 248_320, true, 248_044));

    /** The released shape named {@code size} (case-insensitive), e.g. "0.8b". */
    public static SynthShape released(String size) {
        for (SynthShape s : RELEASED) {
            if (s.size.equals(size.toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw new EdgeLmException("--size: '" + size + "' is not one of "
                + RELEASED.stream().map(SynthShape::size).collect(Collectors.joining(", ")));
    }

    /** The decoder's configuration, value heads in the GGUF's tiled order. */
    public Qwen35Config config() {
        boolean[] full = new boolean[numLayers];
        for (int i = 0; i < numLayers; i++) {
            full[i] = (i + 1) % FULL_ATTENTION_INTERVAL == 0;
        }
        int rotaryDim = headDim / 4;
        // the released split of the 32 rotary frequencies over (temporal, height, width) is [11, 11, 10]
        int pairs = rotaryDim / 2;
        int third = Math.round(pairs / 3f);
        int[] mrope = {third, third, pairs - 2 * third};
        return new Qwen35Config(hiddenSize, numLayers, full, numHeads, numKvHeads, headDim, rotaryDim, ROPE_THETA, mrope,
                linearKeyHeads, linearValueHeads, linearHeadDim, linearHeadDim, CONV_KERNEL, intermediateSize, vocabSize,
                RMS_NORM_EPS, tiedEmbeddings, true, firstSpecialId);
    }
}
