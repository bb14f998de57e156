package dev.edgelm.model;

import dev.edgelm.tensor.WeightMatrix;
import java.util.ArrayList;
import java.util.List;

/**
 * The weights of the Qwen3.5 text decoder in the model's canonical form, whatever file they came from.
 * Matrices are views over the mapped file; the small vectors are float32 copies with the stored
 * conventions already applied, so the forward pass has one meaning for every source:
 * <ul>
 *   <li>RMSNorm scales are the effective multipliers ({@code 1 + w} for Hugging Face's zero-centred
 *       norms; GGUF stores them so already);</li>
 *   <li>{@code negA = -exp(A_log)} (GGUF's {@code ssm_a});</li>
 *   <li>the gated norm of linear attention is a plain {@code w}.</li>
 * </ul>
 */
public record Qwen35Weights(
        WeightMatrix embedTokens,
        DecoderLayer[] layers,
        float[] finalNorm,
        WeightMatrix lmHead) {

    /** One decoder layer: a token mixer and an MLP, each behind an RMSNorm. */
    public record DecoderLayer(
            float[] inputNorm,
            Mixer mixer,
            float[] postAttentionNorm,
            WeightMatrix mlpGate,
            WeightMatrix mlpUp,
            WeightMatrix mlpDown) {}

    /** The token mixer of a layer. */
    public sealed interface Mixer permits GatedDeltaNet, GatedAttention {}

    /**
     * Linear attention. {@code convTaps} is the depthwise conv kernel tap-major, [kernel, convDim] (files
     * store it channel-major; tap-major lets the conv vectorise over channels); {@code negA} and {@code dtBias} are
     * per value head; {@code norm} is over the value head dim.
     */
    public record GatedDeltaNet(
            WeightMatrix inProjQkv,
            WeightMatrix inProjZ,
            WeightMatrix inProjB,
            WeightMatrix inProjA,
            float[] convTaps,
            float[] negA,
            float[] dtBias,
            float[] norm,
            WeightMatrix outProj) implements Mixer {}

    /**
     * Gated full attention. {@code qProj} yields per head [query | gate]; {@code qNorm}/{@code kNorm}
     * are effective multipliers over head_dim.
     */
    public record GatedAttention(
            WeightMatrix qProj,
            WeightMatrix kProj,
            WeightMatrix vProj,
            float[] qNorm,
            float[] kNorm,
            WeightMatrix oProj) implements Mixer {}

    /** Every weight matrix once (a tied output head is the embedding table, counted once). */
    public List<WeightMatrix> matrices() {
        List<WeightMatrix> list = new ArrayList<>();
        list.add(embedTokens);
        for (DecoderLayer layer : layers) {
            switch (layer.mixer()) {
                case GatedDeltaNet d -> list.addAll(List.of(d.inProjQkv(), d.inProjZ(), d.inProjB(), d.inProjA(), d.outProj()));
                case GatedAttention a -> list.addAll(List.of(a.qProj(), a.kProj(), a.vProj(), a.oProj()));
            }
            list.addAll(List.of(layer.mlpGate(), layer.mlpUp(), layer.mlpDown()));
        }
        if (lmHead != embedTokens) {
            list.add(lmHead);
        }
        return list;
    }

    /**
     * Weight bytes one decode step reads: every matrix of every layer and the whole output head, but only
     * one row of the embedding table (unless the head is that table).
     */
    public long decodeBytesPerToken() {
        long bytes = 0;
        for (WeightMatrix m : matrices()) {
            bytes += m == embedTokens && embedTokens != lmHead ? m.byteSize() / m.rows() : m.byteSize();
        }
        return bytes;
    }

    /** A conv kernel stored channel-major [convDim, kernel] (as both file formats do), made tap-major. */
    static float[] tapMajor(float[] channelMajor, int convDim, int kernel) {
        float[] taps = new float[kernel * convDim];
        for (int ch = 0; ch < convDim; ch++) {
            for (int j = 0; j < kernel; j++) {
                taps[j * convDim + ch] = channelMajor[ch * kernel + j];
            }
        }
        return taps;
    }
}
