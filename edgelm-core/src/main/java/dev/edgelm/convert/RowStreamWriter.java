package dev.edgelm.convert;

import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a GGUF file whose tensors are produced one float32 row at a time and encoded on the fly into their
 * ggml type, so that memory stays bounded whatever the model size. Rows are encoded in batches; with more
 * than one thread a batch's rows are produced and encoded in parallel, then written in order, so the bytes
 * do not depend on the thread count. The output appears only when complete (see {@link GgufWriter}).
 */
public final class RowStreamWriter {
    private RowStreamWriter() {}

    /** Produces the rows of one tensor. With several threads, called concurrently for different rows. */
    @FunctionalInterface
    public interface RowSource {
        /** Fills {@code dst[0, cols)} with row {@code r}. */
        void row(int r, float[] dst);
    }

    /** Observes progress: called after each tensor and periodically within large ones. */
    public interface Progress {
        void update(String tensor, long bytesDone, long bytesTotal);
    }

    /** A tensor to write: its entry in the layout, its storage type and where its rows come from. */
    public record Planned(Qwen35Tensors.Entry entry, GgmlType type, RowSource source) {}

    /** What was written. */
    public record Result(Path output, long bytes, int tensors, Map<GgmlType, Integer> typeCounts) {}

    private static final long PROGRESS_STEP_BYTES = 8L << 20;
    private static final int BATCH_BYTES = 4 << 20;

    /** Writes {@code plan} in order; {@code progress} may be null. */
    public static Result write(Path output, Map<String, GgufValue> meta, List<Planned> plan, Progress progress, int threads) {
        List<GgufWriter.TensorSpec> specs = plan.stream()
                .map(p -> new GgufWriter.TensorSpec(p.entry().name(), p.entry().dims(), p.type())).toList();
        Map<GgmlType, Integer> counts = new EnumMap<>(GgmlType.class);
        try (GgufWriter w = GgufWriter.create(output, meta, specs);
             Parallel pool = new Parallel(threads)) {
            long total = w.totalBytes();
            long lastReport = 0;
            for (Planned p : plan) {
                int cols = p.entry().cols();
                int rows = p.entry().rows();
                int rowBytes = (int) p.type().byteSize(cols);
                int batchRows = Math.max(1, Math.min(rows, BATCH_BYTES / rowBytes));
                byte[] bytes = new byte[batchRows * rowBytes];
                MemorySegment seg = MemorySegment.ofArray(bytes);
                for (int first = 0; first < rows; first += batchRows) {
                    int n = Math.min(batchRows, rows - first);
                    int base = first;
                    pool.forRange(n, 1, (long) n * cols * 8, (start, end) -> {
                        float[] row = new float[cols];
                        for (int i = start; i < end; i++) {
                            p.source().row(base + i, row);
                            RowEncoder.encode(p.type(), row, cols, seg.asSlice((long) i * rowBytes, rowBytes));
                        }
                    });
                    w.write(bytes, 0, n * rowBytes);
                    if (progress != null && w.bytesWritten() - lastReport >= PROGRESS_STEP_BYTES) {
                        lastReport = w.bytesWritten();
                        progress.update(p.entry().name(), lastReport, total);
                    }
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
