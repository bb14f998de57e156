package dev.edgelm.synth;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.Qwen35Metadata;
import dev.edgelm.convert.Qwen35Tensors;
import dev.edgelm.convert.Qwen35Tensors.Entry;
import dev.edgelm.convert.RowStreamWriter;
import dev.edgelm.convert.RowStreamWriter.Planned;
import dev.edgelm.convert.RowStreamWriter.RowSource;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.model.Qwen35Config;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Writes a GGUF with random weights at the exact shapes of a Qwen3.5 text decoder, in the {@code qwen35}
 * layout and quantisation recipes of {@code convert}, with a stand-in tokenizer: a model to measure speed
 * and memory on without downloading one. Its text is noise.
 *
 * <p>Values (the file's conventions: norms hold {@code 1 + w}, {@code ssm_a = -exp(A_log)}) keep every
 * activation finite and the logits near unit spread: linear weights have standard deviation 0.02; the
 * tied embedding {@code 1 / sqrt(hidden)}, so that a logit (the final-normed state, root mean square 1,
 * dotted with an embedding row) has standard deviation about 1; norms about 1; the conv kernel 0.3;
 * {@code A} and {@code dt_bias} as Hugging Face initialises them ({@code A} log-uniform in [1, 16],
 * {@code softplus(dt_bias)} log-uniform in [0.001, 0.1]), so every decay {@code exp(-A softplus(.))} lies
 * in (0, 1).
 *
 * <p>Each row comes from its own generator seeded from (seed, tensor name, row): the file is a function of
 * the shape, recipe and seed alone, whatever the thread count.
 */
public final class SyntheticModel {
    static final double LINEAR_STD = 0.02;
    static final double NORM_STD = 0.02;
    static final double CONV_STD = 0.3;
    static final double A_MIN = 1;
    static final double A_MAX = 16;
    static final double DT_MIN = 1e-3;
    static final double DT_MAX = 0.1;

    private SyntheticModel() {}

    /** Writes the model; {@code progress} may be null. Nothing is left at {@code output} on failure. */
    public static RowStreamWriter.Result write(SynthShape shape, QuantRecipe recipe, long seed, Path output,
                                               Consumer<String> warn, RowStreamWriter.Progress progress, int threads) {
        Qwen35Config c = shape.config();
        Map<String, GgufValue> meta = metadata(shape, recipe, seed);
        List<Planned> plan = new ArrayList<>();
        for (Entry e : Qwen35Tensors.of(c)) {
            plan.add(new Planned(e, e.type(recipe, warn), rows(e, c, SeededRows.tensorSeed(seed, e.name()))));
        }
        return RowStreamWriter.write(output, meta, plan, progress, threads);
    }

    /** The metadata {@link #write} writes (configuration, stand-in tokenizer, generation defaults). */
    public static Map<String, GgufValue> metadata(SynthShape shape, QuantRecipe recipe, long seed) {
        Map<String, GgufValue> meta = new LinkedHashMap<>();
        Qwen35Metadata.put(meta, shape.config(), recipe, shape.modelName() + " synthetic (random weights, seed " + seed
                + ")", SynthShape.CONTEXT_LENGTH, shape.modelName());
        StandInTokenizer.build(shape).writeTo(meta);
        StandInTokenizer.generationDefaults(shape).writeTo(meta);
        return meta;
    }

    private static RowSource rows(Entry e, Qwen35Config c, long tensorSeed) {
        int n = e.cols();
        return switch (e.kind()) {
            case TOKEN_EMBD, OUTPUT -> gaussian(tensorSeed, n, 0, 1 / Math.sqrt(c.hiddenSize()));
            case ATTN_NORM, POST_ATTENTION_NORM, OUTPUT_NORM, ATTN_Q_NORM, ATTN_K_NORM, SSM_NORM ->
                    gaussian(tensorSeed, n, 1, NORM_STD);
            case SSM_CONV1D -> gaussian(tensorSeed, n, 0, CONV_STD);
            case SSM_A -> (r, dst) -> {
                SplittableRandom rnd = SeededRows.row(tensorSeed, r);
                for (int i = 0; i < n; i++) {
                    dst[i] = (float) -logUniform(rnd, A_MIN, A_MAX);
                }
            };
            case SSM_DT_BIAS -> (r, dst) -> {
                SplittableRandom rnd = SeededRows.row(tensorSeed, r);
                for (int i = 0; i < n; i++) {
                    double dt = logUniform(rnd, DT_MIN, DT_MAX);
                    dst[i] = (float) (dt + Math.log(-Math.expm1(-dt))); // softplus^-1(dt)
                }
            };
            case ATTN_Q, ATTN_K, ATTN_V, ATTN_OUTPUT, ATTN_QKV, ATTN_GATE, SSM_ALPHA, SSM_BETA, SSM_OUT,
                 FFN_GATE, FFN_UP, FFN_DOWN -> gaussian(tensorSeed, n, 0, LINEAR_STD);
        };
    }

    private static RowSource gaussian(long tensorSeed, int n, double mean, double std) {
        return (r, dst) -> SeededRows.fill(SeededRows.row(tensorSeed, r), dst, n, mean, std);
    }

    private static double logUniform(SplittableRandom rnd, double lo, double hi) {
        return Math.exp(Math.log(lo) + rnd.nextDouble() * (Math.log(hi) - Math.log(lo)));
    }
}
