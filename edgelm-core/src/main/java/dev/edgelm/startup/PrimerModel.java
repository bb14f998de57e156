package dev.edgelm.startup;

import dev.edgelm.convert.QuantRecipe;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.synth.SyntheticModel;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.tensor.quant.GgmlMatrices;
import dev.edgelm.tensor.quant.Q4_0Matrix;
import dev.edgelm.tensor.quant.Q8_0Matrix;
import dev.edgelm.util.AtomicFiles;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
 * <p>The weights only have to keep the forward pass finite, not to mean anything: the types EdgeLM can encode
 * (F32, F16, BF16, Q8_0, Q4_0) get the synthetic model's Gaussian values; the others (K-quants, Q4_1, Q5_0,
 * Q5_1) get pseudo-random quant bytes under a small block scale.
 */
final class PrimerModel {
    /** The primer shape widened to 256 for the formats whose blocks hold 256 values (the K-quants). */
    static final SynthShape WIDE = withHidden(KernelPrimer.SHAPE, 256);
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

    /** Writes the tiny model for a real file with tensor types {@code real} to {@code output}. */
    static void write(Map<String, GgmlType> real, Path output) throws IOException {
        SynthShape shape = shapeFor(real);
        Path base = AtomicFiles.createTemporarySibling(output);
        try {
            Files.delete(base); // the writer creates it atomically
            SyntheticModel.write(shape, QuantRecipe.INT8, 1, base, w -> {}, null, 1);
            try (GgufFile f = GgufFile.open(base)) {
                List<GgufTensorInfo> infos = List.copyOf(f.tensorInfos().values());
                Map<String, GgmlType> plan = plan(infos, real);
                boolean same = infos.stream().allMatch(t -> plan.get(t.name()) == t.type());
                if (!same) {
                    retype(f, infos, plan, output);
                    return;
                }
            }
            Files.move(base, output, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(base);
        }
    }

    private static void retype(GgufFile f, List<GgufTensorInfo> infos, Map<String, GgmlType> plan, Path output) {
        List<GgufWriter.TensorSpec> specs = new ArrayList<>();
        for (GgufTensorInfo t : infos) {
            specs.add(new GgufWriter.TensorSpec(t.name(), t.dims(), plan.get(t.name())));
        }
        Map<String, GgufValue> meta = new LinkedHashMap<>(f.metadata().asMap());
        SplittableRandom random = new SplittableRandom(1);
        try (GgufWriter w = GgufWriter.create(output, meta, specs)) {
            for (GgufTensorInfo t : infos) {
                GgufTensor src = f.tensor(t);
                GgmlType type = plan.get(t.name());
                if (type == t.type()) {
                    w.write(src.data().asByteBuffer());
                    continue;
                }
                int cols = (int) t.rowLength();
                long rows = t.rowCount();
                WeightMatrix m = src.asMatrix();
                MemorySegment row = MemorySegment.ofArray(new byte[(int) type.byteSize(cols)]);
                float[] one = new float[cols];
                for (int r = 0; r < rows; r++) {
                    m.decodeRow(r, one, 0);
                    encode(type, one, row, random);
                    w.write(row.asByteBuffer());
                }
            }
            w.finish();
        }
    }

    /** One row of {@code type}: the values themselves where EdgeLM has the encoder, random quant bytes otherwise. */
    static void encode(GgmlType type, float[] row, MemorySegment dst, SplittableRandom random) {
        int cols = row.length;
        switch (type) {
            case F32 -> MemorySegment.copy(row, 0, dst, F32, 0, cols);
            case F16 -> {
                for (int i = 0; i < cols; i++) {
                    dst.set(U16, 2L * i, Float.floatToFloat16(row[i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < cols; i++) {
                    dst.set(U16, 2L * i, (short) (Float.floatToRawIntBits(row[i]) >>> 16)); // truncation will do here
                }
            }
            case Q8_0 -> Q8_0Matrix.quantize(row, 0, cols, dst, 0);
            case Q4_0 -> Q4_0Matrix.quantize(row, 0, cols, dst, 0);
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
            case Q5_0 -> new int[] {0};
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

    private static SynthShape untied(SynthShape s) {
        return new SynthShape(s.size(), s.modelName(), s.hiddenSize(), s.numLayers(), s.numHeads(), s.numKvHeads(),
                s.headDim(), s.linearKeyHeads(), s.linearValueHeads(), s.linearHeadDim(), s.intermediateSize(),
                s.vocabSize(), false, s.firstSpecialId());
    }
}
