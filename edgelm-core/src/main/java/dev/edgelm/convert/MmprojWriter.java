package dev.edgelm.convert;

import dev.edgelm.convert.RowStreamWriter.RowSource;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a vision projector (mmproj) GGUF: llama.cpp's {@code clip} metadata for a Qwen3.5 tower and the
 * tensors of {@link MmprojTensors}, each produced one row at a time and encoded on the fly (bounded memory).
 * The output appears only when complete (see {@link GgufWriter}).
 */
public final class MmprojWriter {
    private MmprojWriter() {}

    /** A tensor to write: its entry, its storage type and where its rows ({@link MmprojTensors.Entry#rowLength()} values each) come from. */
    public record Planned(MmprojTensors.Entry entry, GgmlType type, RowSource source) {}

    /** What was written. */
    public record Result(Path output, long bytes, int tensors, Map<GgmlType, Integer> typeCounts) {}

    /**
     * The metadata keys and values llama.cpp's converter writes for a Qwen3.5 vision tower, in its order.
     * {@code mean} / {@code std} are the processor's (preprocessor_config.json).
     */
    public static void putMetadata(Map<String, GgufValue> meta, VisionTowerShape s, MmprojType type, String name,
                                   float[] mean, float[] std) {
        meta.put("general.architecture", GgufValue.string("clip"));
        meta.put("general.type", GgufValue.string("mmproj"));
        meta.put("general.name", GgufValue.string(name));
        meta.put("general.size_label", GgufValue.string(sizeLabel(parameterCount(s))));
        meta.put("general.file_type", GgufValue.u32(type.fileType()));
        meta.put("clip.has_vision_encoder", GgufValue.bool(true));
        meta.put("clip.vision.projection_dim", GgufValue.u32(s.textHidden()));
        meta.put("clip.vision.image_size", GgufValue.u32((long) s.positionGrid() * s.patchSize()));
        meta.put("clip.vision.patch_size", GgufValue.u32(s.patchSize()));
        meta.put("clip.vision.embedding_length", GgufValue.u32(s.hidden()));
        meta.put("clip.vision.feed_forward_length", GgufValue.u32(s.intermediate()));
        meta.put("clip.vision.block_count", GgufValue.u32(s.depth()));
        meta.put("clip.vision.attention.head_count", GgufValue.u32(s.heads()));
        meta.put("clip.vision.image_mean", GgufValue.f32Array(mean));
        meta.put("clip.vision.image_std", GgufValue.f32Array(std));
        meta.put("clip.projector_type", GgufValue.string("qwen3vl_merger"));
        meta.put("clip.use_gelu", GgufValue.bool(true));
        meta.put("clip.vision.spatial_merge_size", GgufValue.u32(s.mergeSize()));
        meta.put("clip.vision.attention.layer_norm_epsilon", GgufValue.f32(s.layerNormEps()));
        boolean[] deepstack = new boolean[s.depth()];
        for (int d : s.deepstackLayers()) {
            deepstack[d] = true;
        }
        if (s.depth() > 0) {
            meta.put("clip.vision.is_deepstack_layers", GgufValue.boolArray(deepstack));
        }
        meta.put("general.quantization_version", GgufValue.u32(2));
    }

    /** Parameters of the tower's tensors (the patch kernel once). */
    public static long parameterCount(VisionTowerShape s) {
        long n = 0;
        for (MmprojTensors.Entry e : MmprojTensors.of(s)) {
            n += (long) e.rows() * e.rowLength();
        }
        return n;
    }

    /**
     * gguf-py's {@code size_label}: the count scaled to K, M, B or T with at least two significant digits
     * ({@code model_weight_count_rounded_notation}), e.g. 173088 to "173K", 99,876,544 to "100M".
     */
    static String sizeLabel(long params) {
        double scaled;
        String suffix;
        if (params > 1e12) {
            scaled = params * 1e-12;
            suffix = "T";
        } else if (params > 1e9) {
            scaled = params * 1e-9;
            suffix = "B";
        } else if (params > 1e6) {
            scaled = params * 1e-6;
            suffix = "M";
        } else {
            scaled = params * 1e-3;
            suffix = "K";
        }
        String rounded = Long.toString((long) Math.rint(scaled)).replaceFirst("^0+", "");
        int fix = Math.max(2 - rounded.length(), 0);
        return String.format(Locale.ROOT, "%." + fix + "f", scaled) + suffix;
    }

    /** Writes the plan in order; {@code progress} may be null. */
    public static Result write(Path output, Map<String, GgufValue> meta, List<Planned> plan, RowStreamWriter.Progress progress) {
        List<GgufWriter.TensorSpec> specs = plan.stream()
                .map(p -> new GgufWriter.TensorSpec(p.entry().name(), p.entry().dims(), p.type())).toList();
        Map<GgmlType, Integer> counts = new EnumMap<>(GgmlType.class);
        try (GgufWriter w = GgufWriter.create(output, meta, specs)) {
            long total = w.totalBytes();
            for (Planned p : plan) {
                int cols = p.entry().rowLength();
                int rowBytes = (int) p.type().byteSize(cols);
                float[] row = new float[cols];
                byte[] bytes = new byte[rowBytes];
                MemorySegment seg = MemorySegment.ofArray(bytes);
                for (int r = 0; r < p.entry().rows(); r++) {
                    p.source().row(r, row);
                    RowEncoder.encode(p.type(), row, cols, seg);
                    w.write(bytes, 0, rowBytes);
                }
                counts.merge(p.type(), 1, Integer::sum);
                if (progress != null) {
                    progress.update(p.entry().name(), w.bytesWritten(), total);
                }
            }
            w.finish();
            return new Result(output, total, plan.size(), counts);
        }
    }
}
