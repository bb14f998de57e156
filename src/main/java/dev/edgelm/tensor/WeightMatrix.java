package dev.edgelm.tensor;

import java.lang.foreign.MemorySegment;

/**
 * A read-only 2-D weight matrix [rows, cols] stored row-major in a memory segment (usually a view into a
 * memory-mapped model file), in one element type. Subclasses are the kernels for one storage type: they
 * decode rows and compute dot products straight from the stored bytes, so the model never holds a
 * dequantised copy of its weights.
 *
 * <p>{@link #matmul} computes {@code out[t][r] = dot(row r, x[t])} for a chunk of tokens. With one token
 * it streams every row once (decode, bandwidth-bound); with several it decodes a tile of rows once into a
 * per-thread buffer and runs the register-tiled {@link FloatGemm} over every token of the chunk (prefill:
 * the weight bytes are read and converted once per chunk rather than once per token).
 */
public abstract class WeightMatrix {
    private static final int X_BLOCK_FLOATS = Integer.getInteger("edgelm.xblock", 128 * 1024);
    protected final MemorySegment data;
    protected final int rows;
    protected final int cols;
    private final ThreadLocal<float[]> tileBuffer;

    protected WeightMatrix(MemorySegment data, int rows, int cols) {
        this.data = data;
        this.rows = rows;
        this.cols = cols;
        this.tileBuffer = ThreadLocal.withInitial(() -> new float[FloatGemm.ROWS * cols]);
    }

    public final int rows() {
        return rows;
    }

    public final int cols() {
        return cols;
    }

    /** Storage type name, e.g. "BF16" or "Q8_0". */
    public abstract String typeName();

    /** Bytes of storage this matrix reads per full pass. */
    public long byteSize() {
        return data.byteSize();
    }

    /** Decodes row {@code row} into {@code dst[off .. off+cols)} as float32. */
    public abstract void decodeRow(int row, float[] dst, int off);

    /** Dot product of row {@code row} with {@code x[xOff .. xOff+cols)}. */
    public abstract float dotRow(int row, float[] x, int xOff);

    /**
     * {@code out[t * outStride + outOff + r] = dot(row r, x[t * cols ..])} for t in [0, n), r in [0, rows).
     */
    public void matmul(Parallel pool, float[] x, int n, float[] out, int outStride, int outOff) {
        if (n == 1) {
            pool.forRange(rows, 1, (long) rows * cols, (start, end) -> {
                for (int r = start; r < end; r++) {
                    out[outOff + r] = dotRow(r, x, 0);
                }
            });
            return;
        }
        // Token blocks keep the activations a tile of rows is multiplied with inside L2 (512 KiB of a
        // 1 MiB L2; -Dedgelm.xblock=FLOATS overrides, for tuning on other caches);
        // each row tile is decoded again per block, a small cost next to the block's FMAs.
        int tokenBlock = Math.max(FloatGemm.TOKENS, (X_BLOCK_FLOATS / cols) / FloatGemm.TOKENS * FloatGemm.TOKENS);
        pool.forRange(rows, FloatGemm.ROWS, (long) rows * cols * n, (start, end) -> {
            float[] w = tileBuffer.get();
            for (int t0 = 0; t0 < n; t0 += tokenBlock) {
                int tn = Math.min(tokenBlock, n - t0);
                int xOff = t0 * cols;
                int oOff = outOff + t0 * outStride;
                int r = start;
                for (; r + FloatGemm.ROWS <= end; r += FloatGemm.ROWS) {
                    for (int i = 0; i < FloatGemm.ROWS; i++) {
                        decodeRow(r + i, w, i * cols);
                    }
                    FloatGemm.tile(w, cols, x, xOff, tn, out, outStride, oOff, r);
                }
                for (; r < end; r++) {
                    decodeRow(r, w, 0);
                    for (int t = 0; t < tn; t++) {
                        out[t * outStride + oOff + r] = VectorMath.dot(w, 0, x, xOff + t * cols, cols);
                    }
                }
            }
        });
    }

    /** {@code out[t * rows + r]}: the dense layout. */
    public final void matmul(Parallel pool, float[] x, int n, float[] out) {
        matmul(pool, x, n, out, rows, 0);
    }

    @Override
    public String toString() {
        return typeName() + "[" + rows + ", " + cols + "]";
    }
}
