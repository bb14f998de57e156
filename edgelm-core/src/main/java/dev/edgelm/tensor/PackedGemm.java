package dev.edgelm.tensor;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The float32 GEMM of prefill and of the vision tower on machines with 8-lane vectors (AVX2): many tokens against
 * decoded weight rows, with a register tile that fits AVX2's 16 vector registers.
 *
 * <p>Why not {@link FloatGemm#panelTile}: it keeps 8 rows x 2 vectors = 16 accumulators, which with the two
 * activation vectors and a broadcast needs 19 vector registers. AVX-512 has 32 and runs it at full speed; AVX2 has
 * 16, so the kernel spills. Here a tile is 6 rows x 2 vectors (12 accumulators + 3 = 15 registers, the shape of
 * BLIS's Haswell kernel): per column, two loads of the packed activation panel (16 tokens), six broadcasts of the
 * rows' weights, twelve FMAs; the compiled loop has no spill and no bounds check (checked in the disassembly).
 * One thread, 3072 x 768 x 1024 and 3584 x 1024 x 256 (F32 / F16 rows), alternating in one JVM: 51-67 GFLOP per
 * CPU-second against 34-39 for the 8-row tile, on a core whose bare FMA peak measured 42-75 in the same minutes.
 *
 * <p>Loop order: each thread takes a contiguous share of the rows, decodes 6 of them at a time (every row is decoded
 * once per matmul) and runs them over every panel of the chunk; the 24 KiB of decoded rows stay in L1 while the
 * panels stream from L2 / L3. Above 8 MiB of panels, groups of decoded rows run over L2-sized blocks of panels. Blocked variants (packed row panels and 256-column slices, BLIS's full loop nest)
 * lost here: see the lab note on vision speed.
 *
 * <p>Each output is the same chain of float FMAs over the columns in order as {@link FloatGemm#panelTile}, so the
 * two give identical results on the rows of whole 8-row tiles (the old path's remainder rows are dot products).
 * With 16 lanes or more {@link WeightMatrix#matmul} keeps its panel kernel (12-row tiles by default there; the vision
 * tower's long rows come here through {@link #matmul}, for the panel blocks). {@code -Dedgelm.gemm.legacy=true}
 * makes the text path use the 8-row kernel on AVX2 too (to measure against it).
 */
public final class PackedGemm {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    static final int PANEL = FloatGemm.PANEL;
    /** Weight rows per tile. */
    static final int MR = 6;
    /** Whether {@link WeightMatrix#matmul} multiplies chunks of 8 tokens or more through {@link #multiply}. */
    public static final boolean ENABLED = L == 8 && !Boolean.getBoolean("edgelm.gemm.legacy");

    private static final Scratch.Floats ROWS = new Scratch.Floats();
    private static final Scratch.Floats RESULTS = new Scratch.Floats();
    private static final Scratch.Floats GROUP = new Scratch.Floats();
    /**
     * Packed activations above which panels go in blocks (8 MiB: beyond L2 and a fair share of L3;
     * {@code -Dedgelm.gemm.blockAbove=FLOATS} moves it). 4 MiB was tried for the 2B's MLP down (256 tokens of 6144
     * columns, 6 MiB of panels): 47 against 40 GFLOP per CPU-second on one thread, but the whole 2B prefill on two
     * threads 36.8 against 38.9 tokens/s with 8 MiB (docs/lab/prefill.md, round 2). Tests shrink these three.
     */
    static int blockAboveFloats = Integer.getInteger("edgelm.gemm.blockAbove", 2 * 1024 * 1024);
    /** Floats of activation panels per block (256 KiB: half of L2). */
    static int panelBlockFloats = 64 * 1024;
    /** Floats of decoded rows per group (8 MiB per thread). */
    static int groupFloats = 2 * 1024 * 1024;

    private PackedGemm() {}

    /** {@code out[t * rows + r] = dot(row r of w, token t of in)}: the dense layout. */
    /**
     * The shortest rows that take this tile on 16 lanes (the vision MLP down: 3072 values at 0.8B, 4096 at 2B); the
     * encoder's other linears (768 or 1024 values) are faster on the panel kernel at every image size.
     */
    static int longRows = 3072;

    public static void matmul(Parallel pool, WeightMatrix w, Activations in, float[] out) {
        matmul(pool, w, in, out, w.rows(), 0);
    }

    /**
     * {@code out[t * outStride + outOff + r] = dot(row r of w, token t of in)}: {@link WeightMatrix#matmul}, which
     * on 8-lane machines multiplies chunks of {@link FloatGemm#PANEL} / 2 tokens or more through {@link #multiply}.
     * Also when the text path's kernel is forced back ({@code edgelm.gemm.legacy}), the vision tower keeps this
     * class's tile, as before. With 16 lanes or more, the vision tower's matmuls whose packed activations pass
     * {@link #blockAboveFloats} (the MLP down: long rows, many patches) run here too, for the panel blocks that the
     * 8-row kernel lacks: one thread, thread CPU time, F16, 1024 patches, AVX-512, alternating in one JVM,
     * 1024 x 4096 (2B MLP down) 202.8-209.1 GFLOP per CPU-second against 187.4-188.8 (and 155.6-175.5 in an
     * earlier round), 768 x 3072 (0.8B) 210.8-216.4 against 213.4-216.8 (the same). The shorter rows stay on the 8-row
     * kernel, which wins there (3072 x 768: 202.5-209.0 against 181.9-189.0 for this tile), also when a large image's
     * packed activations pass the bound: only rows of {@link #longRows} values or more take this route. Each output
     * is the same FMA chain as the panel kernel's on its whole 8-row tiles, so the bits do not change.
     */
    public static void matmul(Parallel pool, WeightMatrix w, Activations in, float[] out, int outStride, int outOff) {
        boolean wide = L > 8 && w.cols() >= longRows && (long) in.panelCount() * PANEL * w.cols() > blockAboveFloats;
        if ((wide || (!ENABLED && L == 8)) && in.tokens() >= PANEL / 2 && !in.isEachToken()) {
            if (in.cols() != w.cols()) {
                throw new IllegalArgumentException(w + " multiplies rows of " + w.cols() + " values, got " + in.cols());
            }
            multiply(w, pool, in, out, outStride, outOff);
            return;
        }
        w.matmul(pool, in, out, outStride, outOff);
    }

    /**
     * The tiled GEMM: {@code out[t * outStride + outOff + r] = dot(row r of w, token t of in)}, for
     * {@code in.cols() == w.cols()}: the text path's kernel on 8-lane vectors, and the vision tower's long rows on
     * wider ones.
     */
    static void multiply(WeightMatrix w, Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        int n = in.tokens();
        int cols = w.cols();
        float[] xt = in.panels(pool);
        int panels = in.panelCount();
        int rows = w.rows();
        boolean blocked = (long) panels * PANEL * cols > blockAboveFloats;
        int panelBlock = Math.max(1, panelBlockFloats / (PANEL * cols));
        int groupRows = Math.max(MR, groupFloats / cols / MR * MR);
        boolean clocked = StageClock.active();
        long wall = clocked ? System.nanoTime() : 0L;
        // whole groups of decoded rows when blocked (the panel blocks are reused across a group)
        pool.forRange(rows, blocked ? groupRows : MR, (long) rows * cols * n, (start, end) -> {
            float[] tmp = RESULTS.get(MR * PANEL);
            if (!blocked) {
                float[] a = ROWS.get(MR * cols);
                long decodeNs = 0;
                long t0 = clocked ? System.nanoTime() : 0L;
                long cpu0 = clocked ? StageClock.cpuNanos() : 0L;
                for (int r0 = start; r0 < end; r0 += MR) {
                    int valid = Math.min(MR, end - r0);
                    long d0 = clocked ? System.nanoTime() : 0L;
                    decode(w, r0, valid, a, 0);
                    if (clocked) {
                        decodeNs += System.nanoTime() - d0;
                    }
                    for (int p = 0; p < panels; p++) {
                        tile(a, 0, cols, xt, p * PANEL * cols, tmp);
                        write(tmp, valid, Math.min(PANEL, n - p * PANEL), out, outStride, outOff, r0, p * PANEL);
                    }
                }
                if (clocked) {
                    StageClock.add("gemm.decode (thread sum)", decodeNs);
                    StageClock.add("gemm.tile+write (thread sum)", System.nanoTime() - t0 - decodeNs);
                    StageClock.add("gemm.cpu (thread sum)", StageClock.cpuNanos() - cpu0);
                }
                return;
            }
            // Many tokens of long rows: a group of rows decoded once, then blocks of panels that stay in L2
            // while every row tile of the group runs over them.
            float[] a = GROUP.get(Math.min(groupRows, (end - start + MR - 1) / MR * MR) * cols);
            long decodeNs = 0;
            long t0 = clocked ? System.nanoTime() : 0L;
            long cpu0 = clocked ? StageClock.cpuNanos() : 0L;
            for (int g0 = start; g0 < end; g0 += groupRows) {
                int g1 = Math.min(end, g0 + groupRows);
                int tiles = (g1 - g0 + MR - 1) / MR;
                long d0 = clocked ? System.nanoTime() : 0L;
                for (int q = 0; q < tiles; q++) {
                    decode(w, g0 + q * MR, Math.min(MR, g1 - g0 - q * MR), a, q * MR * cols);
                }
                if (clocked) {
                    decodeNs += System.nanoTime() - d0;
                }
                for (int p0 = 0; p0 < panels; p0 += panelBlock) {
                    int p1 = Math.min(panels, p0 + panelBlock);
                    for (int q = 0; q < tiles; q++) {
                        int r0 = g0 + q * MR;
                        int valid = Math.min(MR, g1 - r0);
                        for (int p = p0; p < p1; p++) {
                            tile(a, q * MR * cols, cols, xt, p * PANEL * cols, tmp);
                            write(tmp, valid, Math.min(PANEL, n - p * PANEL), out, outStride, outOff, r0, p * PANEL);
                        }
                    }
                }
            }
            if (clocked) {
                StageClock.add("gemm.decode (thread sum)", decodeNs);
                StageClock.add("gemm.tile+write (thread sum)", System.nanoTime() - t0 - decodeNs);
                StageClock.add("gemm.cpu (thread sum)", StageClock.cpuNanos() - cpu0);
            }
        });
        if (clocked) {
            StageClock.add("gemm " + rows + "x" + cols + " wall", System.nanoTime() - wall);
        }
    }

    /** Rows {@code [r0, r0 + valid)} of {@code w} into {@code a[off ..]}, {@link #MR} rows, zeros past the valid ones. */
    private static void decode(WeightMatrix w, int r0, int valid, float[] a, int off) {
        int cols = w.cols();
        for (int i = 0; i < MR; i++) {
            if (i < valid) {
                w.decodeRow(r0 + i, a, off + i * cols);
            } else {
                Arrays.fill(a, off + i * cols, off + (i + 1) * cols, 0f);
            }
        }
    }

    /** A tile's results ({@code tmp[i * PANEL + j]}) to rows {@code r0 + i < r0 + valid} of tokens {@code t0 + j}. */
    private static void write(float[] tmp, int valid, int tokens, float[] out, int outStride, int outOff, int r0, int t0) {
        for (int j = 0; j < tokens; j++) {
            int o = (t0 + j) * outStride + outOff + r0;
            for (int i = 0; i < valid; i++) {
                out[o + i] = tmp[i * PANEL + j];
            }
        }
    }

    /**
     * {@link #MR} decoded rows ({@code w[wOff ..]}, back to back, {@code cols} each) against one packed panel at
     * {@code xt[xtOff..]}: {@code tmp[i * PANEL + j] = sum over k of w[wOff + i * cols + k] * xt[xtOff + k * PANEL + j]}.
     */
    static void tile(float[] w, int wOff, int cols, float[] xt, int xtOff, float[] tmp) {
        RegisterTile.multiply(w, wOff, cols, cols, xt, xtOff, tmp, 0, PANEL);
    }
}
