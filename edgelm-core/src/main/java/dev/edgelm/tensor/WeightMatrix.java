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
 * per-thread buffer and runs a register-tiled {@link FloatGemm} kernel over every token of the chunk
 * (prefill: the weight bytes are read and converted once per chunk rather than once per token).
 */
public abstract class WeightMatrix {
    private static final int X_BLOCK_FLOATS = Integer.getInteger("edgelm.xblock", 4 * 1024 * 1024);
    protected final MemorySegment data;
    protected final int rows;
    protected final int cols;
    /** Per calling thread: the input of a one-matrix {@link #matmul(Parallel, float[], int, float[], int, int)}. */
    private static final ThreadLocal<Activations> INPUT = ThreadLocal.withInitial(Activations::new);
    /** Per thread: decoded weight rows of the current tile, sized for the widest matrix seen. */
    private static final Scratch.Floats TILE_ROWS = new Scratch.Floats();

    protected WeightMatrix(MemorySegment data, int rows, int cols) {
        this.data = data;
        this.rows = rows;
        this.cols = cols;
    }

    public final int rows() {
        return rows;
    }

    public final int cols() {
        return cols;
    }

    /** Storage type name, e.g. "BF16" or "Q8_0". */
    public abstract String typeName();

    /** The stored bytes, read-only. */
    public final MemorySegment storage() {
        return data.asReadOnly();
    }

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
    public final void matmul(Parallel pool, float[] x, int n, float[] out, int outStride, int outOff) {
        matmul(pool, INPUT.get().set(x, n, cols), out, outStride, outOff);
    }

    /** {@code out[t * rows + r]}: the dense layout. */
    public final void matmul(Parallel pool, float[] x, int n, float[] out) {
        matmul(pool, x, n, out, rows, 0);
    }

    /** As {@link #matmul(Parallel, Activations, float[], int, int)} with the dense layout. */
    public final void matmul(Parallel pool, Activations in, float[] out) {
        matmul(pool, in, out, rows, 0);
    }

    /**
     * {@code out[t * outStride + outOff + r] = dot(row r, token t of in)}. Matrices multiplied by the same
     * {@link Activations} share its packed forms.
     */
    public final void matmul(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (in.cols() != cols) {
            throw new IllegalArgumentException(this + " multiplies rows of " + cols + " values, got " + in.cols());
        }
        long t0 = (StageClock.DECODE || StageClock.BATCH) && !pool.fusing() ? StageClock.start() : 0L;
        if (in.isEachToken() && in.tokens() > 1) {
            multiplyEach(pool, in, out, outStride, outOff);
        } else {
            multiply(pool, in, out, outStride, outOff);
        }
        if (t0 != 0L) {
            StageClock.stop("matvec " + rows + "x" + cols, t0);
        }
    }

    /**
     * The work of a matmul whose input is {@linkplain Activations#eachToken(boolean) independent tokens}: each
     * token's result is bit for bit what a one-token matmul gives ({@link #dotRow}), while each row is read
     * from memory once for all the tokens (it stays in L1 between them). Formats with a decode kernel of
     * their own override this with one that also shares the row's decoding between the tokens.
     */
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        int n = in.tokens();
        float[] x = in.x();
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int t = 0; t < n; t++) {
                    out[t * outStride + outOff + r] = dotRow(r, x, t * cols);
                }
            }
        });
    }

    /**
     * The work of {@link #matmul(Parallel, Activations, float[], int, int)}, for an input of this matrix's
     * width: one-token rows through {@link #dotRow}, chunks through the float kernels. Formats with kernels
     * of their own override it.
     */
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        int n = in.tokens();
        float[] x = in.x();
        if (n == 1) {
            pool.forRange(rows, 1, (long) rows * cols, (start, end) -> {
                for (int r = start; r < end; r++) {
                    out[outOff + r] = dotRow(r, x, 0);
                }
            });
            return;
        }
        if (n >= FloatGemm.PANEL / 2) {
            if (PackedGemm.ENABLED) {
                // 8-lane vectors (AVX2): the 6-row tile, which fits 16 registers (the 8-row one needs 19).
                PackedGemm.multiply(this, pool, in, out, outStride, outOff);
            } else {
                matmulPanels(pool, in, out, outStride, outOff);
            }
            return;
        }
        // Few tokens: the dot-product tile, four rows by four tokens.
        pool.forRange(rows, FloatGemm.ROWS, (long) rows * cols * n, (start, end) -> {
            float[] w = tileRows();
            int r = start;
            for (; r + FloatGemm.ROWS <= end; r += FloatGemm.ROWS) {
                for (int i = 0; i < FloatGemm.ROWS; i++) {
                    decodeRow(r + i, w, i * cols);
                }
                FloatGemm.tile(w, cols, x, 0, n, out, outStride, outOff, r);
            }
            for (; r < end; r++) {
                decodeRow(r, w, 0);
                for (int t = 0; t < n; t++) {
                    out[t * outStride + outOff + r] = VectorMath.dot(w, 0, x, t * cols, cols);
                }
            }
        });
    }

    /**
     * A chunk of tokens with 16-lane vectors (or {@code -Dedgelm.gemm.legacy=true}): the activations are packed once into panels of {@link FloatGemm#PANEL} tokens, then
     * each thread decodes {@link FloatGemm#PANEL_ROWS} rows at a time and runs the outer-product kernel over
     * every panel of a block. A block of panels holds up to 16 MiB of activations (-Dedgelm.xblock=FLOATS
     * overrides), which in practice means the whole chunk: each row tile is decoded once per block, and
     * decoding once and streaming the panels from L3 beat re-decoding per L2-sized block (one thread, Q8_0,
     * 256 tokens: 125-129 GFLOP/s against 95-109 with 512 KiB blocks, at the 0.8B and 2B MLP shapes).
     */
    final void matmulPanels(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        matmulPanels(pool, in, out, outStride, outOff, WIDE_TILE);
    }

    /**
     * Whether {@link #matmulPanels} runs 12-row tiles (16-lane vectors only: AVX2 has too few registers;
     * {@code -Dedgelm.gemm.wide=false}: 8-row ones only).
     */
    static final boolean WIDE_TILE = FloatGemm.PANEL >= 32
            && Boolean.parseBoolean(System.getProperty("edgelm.gemm.wide", "true"));

    final void matmulPanels(Parallel pool, Activations in, float[] out, int outStride, int outOff, boolean wide) {
        int n = in.tokens();
        float[] x = in.x();
        int panelFloats = FloatGemm.PANEL * cols;
        int panels = in.panelCount();
        float[] packed = in.panels(pool);
        int panelBlock = Math.max(1, X_BLOCK_FLOATS / panelFloats);
        boolean clocked = StageClock.active();
        long wall = clocked ? System.nanoTime() : 0L;
        // ranges of whole 12-row tile pairs (24 rows, three 8-row tiles) where the 12-row tile runs
        pool.forRange(rows, wide ? 3 * FloatGemm.PANEL_ROWS : FloatGemm.PANEL_ROWS, (long) rows * cols * n,
                (start, end) -> {
            float[] w = tileRows();
            float[] tmp = FloatGemm.tileResults();
            long cpu0 = clocked ? StageClock.cpuNanos() : 0L;
            for (int p0 = 0; p0 < panels; p0 += panelBlock) {
                int p1 = Math.min(panels, p0 + panelBlock);
                int r = start;
                if (wide) {
                    // 12-row tiles over the rows the 8-row tiles would take (a multiple of 8), the last 8 or 16 left
                    // to those: every row gets the FMA chain it gets from the 8-row tiles
                    int full = (end - r) / FloatGemm.PANEL_ROWS * FloatGemm.PANEL_ROWS;
                    int wideRows = FloatGemm.PANEL_ROWS_WIDE;
                    int tiles = full % wideRows == 4 ? full / wideRows - 1 : full / wideRows;
                    for (int q = 0; q < tiles; q++, r += wideRows) {
                        for (int i = 0; i < wideRows; i++) {
                            decodeRow(r + i, w, i * cols);
                        }
                        for (int p = p0; p < p1; p++) {
                            int t0 = p * FloatGemm.PANEL;
                            FloatGemm.panelTile12(w, cols, packed, p * panelFloats, out, outStride, outOff, r, t0,
                                    Math.min(FloatGemm.PANEL, n - t0), tmp);
                        }
                    }
                }
                for (; r + FloatGemm.PANEL_ROWS <= end; r += FloatGemm.PANEL_ROWS) {
                    for (int i = 0; i < FloatGemm.PANEL_ROWS; i++) {
                        decodeRow(r + i, w, i * cols);
                    }
                    for (int p = p0; p < p1; p++) {
                        int t0 = p * FloatGemm.PANEL;
                        FloatGemm.panelTile(w, cols, packed, p * panelFloats, out, outStride, outOff, r, t0,
                                Math.min(FloatGemm.PANEL, n - t0), tmp);
                    }
                }
                for (; r < end; r++) {
                    decodeRow(r, w, 0);
                    for (int t = p0 * FloatGemm.PANEL; t < Math.min(n, p1 * FloatGemm.PANEL); t++) {
                        out[t * outStride + outOff + r] = VectorMath.dot(w, 0, x, t * cols, cols);
                    }
                }
            }
            if (clocked) {
                StageClock.add("gemm.cpu (thread sum)", StageClock.cpuNanos() - cpu0);
            }
        });
        if (clocked) {
            StageClock.add("gemm " + rows + "x" + cols + " wall", System.nanoTime() - wall);
        }
    }

    private float[] tileRows() {
        return TILE_ROWS.get(Math.max(FloatGemm.ROWS, FloatGemm.PANEL_ROWS_WIDE) * cols);
    }

    @Override
    public String toString() {
        return typeName() + "[" + rows + ", " + cols + "]";
    }
}
