package dev.edgelm.startup;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.convert.Qwen35Tensors;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticModel;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.quant.GgmlMatrices;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The primer's tiny model, with the ggml types of the model about to be loaded: each tensor of the tiny model
 * takes the type its namesake (same role, e.g. {@code blk.N.ffn_down.weight}) has in the real file, so that the
 * primer compiles the kernels of those types and no others. Where a role has several types in the real file
 * (a Q4_K_M file's {@code ffn_down} is Q6_K in some layers, Q4_K in others), the tiny model's layers take them
 * in turn.
 *
 * <p>The weights only have to keep the forward pass finite, not to mean anything: quantised matrices get
 * pseudo-random quant bytes under a small block scale, float ones small pseudo-random values, the small F32
 * tensors (norms, decay, convolution) constants.
 */
final class PrimerModel {
    /**
     * The primer shape widened to 256 for the formats whose blocks hold 256 values (the K-quants), with an MLP of
     * 1024: the working copies' kernels take other paths on longer rows, and the tiny model must have both kinds.
     * {@code Q4Lanes} multiplies groups of blocks (32 blocks, 1024 values, at AVX-512; 16, 512 values, at AVX2) and ends a row with a
     * half-width group: 256-wide rows (every projection of the tiny model) are one half group, the 0.8B's 1024-wide
     * rows are full groups only. {@code Q6_KLanes} decodes pairs of super-blocks by a transpose and an odd last one
     * by scalar code: a 256-wide row is that last one alone. With an MLP of 256 the first prompt of a Q4_K_M file
     * met both full-width paths uncompiled (a cold 47-token prompt 1.6-2.3 s against 0.6-0.7 s warm; with 1024,
     * 0.87-0.92 s: docs/lab/startup.md, round 4).
     */
    static final SynthShape WIDE = withIntermediate(withHidden(KernelPrimer.SHAPE, 256), 1024);
    /**
     * The primer shape for a file with Q4_0 matrices: hidden size 128 (Q4_0's blocks hold 32 values), the MLP of 1024
     * for the same reason as {@link #WIDE}'s (Q4_0's working copies are {@code Q4Lanes} too). A cold 47-token prompt
     * of the 0.8B int4 file: 0.64-0.84 s against 0.96-1.01 s with an MLP of 256 (warm 0.35-0.49 s); on Q8_0, which has
     * no width-dependent paths, the wider MLP gained nothing (0.62-0.74 against 0.71-0.73 s) and is not used.
     */
    static final SynthShape Q4_0_SHAPE = withIntermediate(KernelPrimer.SHAPE, 1024);
    private static final Pattern LAYER = Pattern.compile("blk\\.(\\d+)\\.(.*)");
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** The block scale of the random quant bytes: values stay within a few tenths. */
    private static final short SMALL_SCALE = Float.floatToFloat16(1f / 1024);

    private PrimerModel() {}

    /** The tiny model's shape for a real file with these tensor types (empty: the Q8_0 default). */
    static SynthShape shapeFor(Map<String, GgmlType> real) {
        SynthShape s = KernelPrimer.SHAPE;
        for (GgmlType t : real.values()) {
            if (t != null && usable(t) && t.blockSize() > s.hiddenSize()) {
                s = WIDE;
            }
        }
        if (s == KernelPrimer.SHAPE && real.containsValue(GgmlType.Q4_0)) {
            s = Q4_0_SHAPE; // Q4Lanes, as the K-quants: rows of full groups too
        }
        if (real.containsKey("output.weight")) {
            s = untied(s);
        }
        return s;
    }

    /**
     * The type of each tensor of the tiny model whose tensors are {@code tiny} (name to type as written by
     * the synthetic model), after the real file's types {@code real}.
     */
    static Map<String, GgmlType> plan(List<GgufTensorInfo> tiny, Map<String, GgmlType> real) {
        Map<String, List<GgmlType>> byRole = new LinkedHashMap<>();
        for (Map.Entry<String, GgmlType> e : real.entrySet()) {
            if (e.getValue() != null && usable(e.getValue())) {
                byRole.computeIfAbsent(role(e.getKey()), k -> new ArrayList<>()).add(e.getValue());
            }
        }
        Map<String, GgmlType> plan = new LinkedHashMap<>();
        for (GgufTensorInfo t : tiny) {
            GgmlType type = t.type();
            List<GgmlType> seen = byRole.get(role(t.name()));
            if (type != GgmlType.F32 && seen != null) { // F32 tensors (norms, conv, ssm_a) stay as they are
                List<GgmlType> distinct = List.copyOf(new LinkedHashSet<>(seen));
                GgmlType wanted = distinct.get(layer(t.name()) % distinct.size());
                if (t.rowLength() % wanted.blockSize() == 0) {
                    type = wanted;
                }
            }
            plan.put(t.name(), type);
        }
        return plan;
    }

    /**
     * Writes the tiny model for a real file with tensor types {@code real} to {@code output}, with bytes that
     * cost nothing to make (no Gaussian draws, no quantiser: on a fresh JVM those run interpreted, and the
     * synthetic model's writer took 0.9 s of the primer's start that way).
     */
    static void write(Map<String, GgmlType> real, Path output) {
        SynthShape shape = shapeFor(real);
        List<Qwen35Tensors.Entry> entries = Qwen35Tensors.of(shape.config());
        List<GgufTensorInfo> tiny = new ArrayList<>();
        for (Qwen35Tensors.Entry e : entries) {
            tiny.add(new GgufTensorInfo(e.name(), e.dims(), e.type(QuantRecipe.INT8, w -> {}), 0));
        }
        Map<String, GgmlType> plan = plan(tiny, real);
        List<GgufWriter.TensorSpec> specs = new ArrayList<>();
        for (GgufTensorInfo t : tiny) {
            specs.add(new GgufWriter.TensorSpec(t.name(), t.dims(), plan.get(t.name())));
        }
        SplittableRandom random = new SplittableRandom(1);
        try (GgufWriter w = GgufWriter.create(output, SyntheticModel.metadata(shape, QuantRecipe.INT8, 1), specs)) {
            for (Qwen35Tensors.Entry e : entries) {
                GgmlType type = plan.get(e.name());
                MemorySegment bytes = MemorySegment.ofArray(new byte[(int) type.byteSize((long) e.rows() * e.cols())]);
                if (type == GgmlType.F32 && e.kind().storage() == Qwen35Tensors.Storage.F32) {
                    bytes.fill((byte) 0);
                    float v = constant(e.kind());
                    for (long i = 0; i < bytes.byteSize(); i += 4) {
                        bytes.set(F32, i, v);
                    }
                } else {
                    fill(type, bytes, random);
                }
                w.write(bytes.asByteBuffer());
            }
            w.finish();
        }
    }

    /** The value of every element of a small F32 tensor: a norm gain of 1, a decay and a step of the usual sizes. */
    private static float constant(Qwen35Tensors.Kind kind) {
        return switch (kind) {
            case SSM_A -> -2f; // -exp(A_log): a decay rate
            case SSM_DT_BIAS -> -4.6f; // softplus^-1(0.01)
            case SSM_CONV1D -> 0.25f;
            default -> 1f; // norm gains
        };
    }

    /** A matrix of {@code type}: small pseudo-random floats, or pseudo-random quant bytes under a small block scale. */
    static void fill(GgmlType type, MemorySegment dst, SplittableRandom random) {
        switch (type) {
            case F32, F16, BF16 -> {
                int size = type.typeSize();
                for (long i = 0; i < dst.byteSize(); i += size) {
                    float v = (float) ((random.nextDouble() - 0.5) * 0.04);
                    switch (type) {
                        case F32 -> dst.set(F32, i, v);
                        case F16 -> dst.set(U16, i, Float.floatToFloat16(v));
                        default -> dst.set(U16, i, (short) (Float.floatToRawIntBits(v) >>> 16));
                    }
                }
            }
            default -> randomBlocks(type, dst, random);
        }
    }

    private static void randomBlocks(GgmlType type, MemorySegment dst, SplittableRandom random) {
        byte[] bytes = new byte[(int) dst.byteSize()];
        random.nextBytes(bytes);
        MemorySegment.copy(bytes, 0, dst, ValueLayout.JAVA_BYTE, 0, bytes.length);
        int[] scales = scaleOffsets(type);
        for (long b = 0; b < dst.byteSize(); b += type.typeSize()) {
            for (int off : scales) {
                dst.set(U16, b + off, SMALL_SCALE);
            }
        }
    }

    /** Byte offsets of a block's float16 scales (ggml's block layouts). */
    static int[] scaleOffsets(GgmlType type) {
        return switch (type) {
            case Q4_1, Q5_1, Q4_K, Q5_K -> new int[] {0, 2}; // d, then m / dmin
            case Q8_0, Q4_0, Q5_0 -> new int[] {0};
            case Q2_K -> new int[] {80, 82}; // after scales[16] and qs[64]
            case Q3_K -> new int[] {108}; // after hmask[32], qs[64], scales[12]
            case Q6_K -> new int[] {208}; // after ql[128], qh[64], scales[16]
            default -> throw new IllegalArgumentException("no random blocks for " + type);
        };
    }

    /** Types worth priming: those EdgeLM computes with, matrices only. */
    private static boolean usable(GgmlType t) {
        return GgmlMatrices.SUPPORTED.contains(t) && t != GgmlType.F32;
    }

    private static String role(String name) {
        Matcher m = LAYER.matcher(name);
        return m.matches() ? "blk.N." + m.group(2) : name;
    }

    private static int layer(String name) {
        Matcher m = LAYER.matcher(name);
        return m.matches() ? Integer.parseInt(m.group(1)) : 0;
    }

    private static SynthShape withHidden(SynthShape s, int hidden) {
        return new SynthShape(s.size(), s.modelName(), hidden, s.numLayers(), s.numHeads(), s.numKvHeads(), s.headDim(),
                s.linearKeyHeads(), s.linearValueHeads(), s.linearHeadDim(), s.intermediateSize(), s.vocabSize(),
                s.tiedEmbeddings(), s.firstSpecialId());
    }

    private static SynthShape withIntermediate(SynthShape s, int intermediate) {
        return new SynthShape(s.size(), s.modelName(), s.hiddenSize(), s.numLayers(), s.numHeads(), s.numKvHeads(), s.headDim(),
                s.linearKeyHeads(), s.linearValueHeads(), s.linearHeadDim(), intermediate, s.vocabSize(),
                s.tiedEmbeddings(), s.firstSpecialId());
    }

    private static SynthShape untied(SynthShape s) {
        return new SynthShape(s.size(), s.modelName(), s.hiddenSize(), s.numLayers(), s.numHeads(), s.numKvHeads(),
                s.headDim(), s.linearKeyHeads(), s.linearValueHeads(), s.linearHeadDim(), s.intermediateSize(),
                s.vocabSize(), false, s.firstSpecialId());
    }
}
