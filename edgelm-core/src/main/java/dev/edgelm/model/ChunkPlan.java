package dev.edgelm.model;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How a prompt of T tokens is cut into forward calls: at most {@code maxChunk} tokens each, or an explicit
 * list of sizes that must add up to T. Logits never depend on the plan (up to float rounding); the plan
 * only trades peak scratch memory against matmul efficiency.
 */
public final class ChunkPlan {
    public static final int DEFAULT_MAX_CHUNK = 512;

    private final int maxChunk;
    private final int[] sizes;

    private ChunkPlan(int maxChunk, int[] sizes) {
        this.maxChunk = maxChunk;
        this.sizes = sizes;
    }

    public static ChunkPlan maxChunk(int maxChunk) {
        if (maxChunk < 1) {
            throw new EdgeLmException("chunk size must be at least 1, got " + maxChunk);
        }
        return new ChunkPlan(maxChunk, null);
    }

    public static ChunkPlan defaultPlan() {
        return maxChunk(DEFAULT_MAX_CHUNK);
    }

    public static ChunkPlan explicit(int... sizes) {
        if (sizes.length == 0) {
            throw new EdgeLmException("an explicit chunk plan needs at least one size");
        }
        for (int s : sizes) {
            if (s < 1) {
                throw new EdgeLmException("chunk sizes must be at least 1, got " + Arrays.toString(sizes));
            }
        }
        return new ChunkPlan(0, sizes.clone());
    }

    /** The chunk sizes for a prompt of {@code total} tokens. */
    public List<Integer> split(int total) {
        List<Integer> out = new ArrayList<>();
        if (sizes != null) {
            long sum = 0;
            for (int s : sizes) {
                sum += s;
                out.add(s);
            }
            if (sum != total) {
                throw new EdgeLmException("chunk sizes " + Arrays.toString(sizes) + " add up to " + sum
                        + " but there are " + total + " tokens");
            }
            return out;
        }
        for (long done = 0; done < total; done += maxChunk) {
            out.add((int) Math.min(maxChunk, total - done));
        }
        return out;
    }

    @Override
    public String toString() {
        return sizes != null ? "chunks " + Arrays.toString(sizes) : "max chunk " + maxChunk;
    }
}
