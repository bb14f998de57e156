package dev.edgelm.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The input of one or more matmuls: n tokens of {@code cols} values each, token-major in {@code x}, plus the
 * forms the prefill kernels read, built on first use and then shared by every matrix multiplied by the
 * same input. Several projections of a layer read one input (q/k/v/z/beta/decay, gate/up), and packing
 * costs per input, not per matrix: packed per matrix, it was ~5 % of a 256-token 0.8B int4 prefill.
 *
 * <ul>
 *   <li>{@link #panels}: panels of {@link FloatGemm#PANEL} tokens, column-major inside a panel
 *       ({@code [panel][column][token]}, zeros past token n), for the outer-product kernels;
 *   <li>{@link #int8Panels}/{@link #int8Scales}: those panels rounded to int8 per token and block of 32
 *       columns the way ggml rounds activations for its Q8_0 dot products ({@code d = amax / 127}, values
 *       rounded to nearest with ties to even as its x86 kernels do, {@code d} kept at fp16 precision), for
 *       kernels that multiply in integers as llama.cpp does.
 * </ul>
 *
 * <p>One object is reused: {@link #set} points it at a new input and drops the packed forms, keeping their
 * arrays. It belongs to one calling thread at a time; the packing itself is split between the pool's
 * threads.
 */
public final class Activations {
    /** Columns per int8 block. */
    public static final int BLOCK = 32;
    private static final int PANEL = FloatGemm.PANEL;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** Shorts as many as one float vector's lanes: the rounded values of one vector. */
    private static final VectorSpecies<Short> SHORT_HALF =
            VectorSpecies.of(short.class, VectorShape.forBitSize(16 * F.length()));
    private static final float ROUNDER = 12582912f;
    /** The even and the odd lanes of two vectors side by side (with 8 or 16 lanes). */
    private static final VectorShuffle<Float> EVEN_LANES = VectorShuffle.fromOp(F, i -> 2 * i);
    private static final VectorShuffle<Float> ODD_LANES = VectorShuffle.fromOp(F, i -> 2 * i + 1);

    private float[] x;
    private int n;
    private int cols;
    private float[] panels = new float[0];
    private short[] int8 = new short[0];
    private float[] int8Scales = new float[0];
    private float[] int8Sums = new float[0];
    private boolean packed;
    private boolean rounded;
    private boolean eachToken;

    /** Points this at tokens {@code [0, n)} of {@code x}, {@code cols} values each; returns this. */
    public Activations set(float[] x, int n, int cols) {
        if (n < 1 || cols < 1 || (long) n * cols > x.length) {
            throw new IllegalArgumentException(n + " tokens of " + cols + " values do not fit " + x.length + " floats");
        }
        this.x = x;
        this.n = n;
        this.cols = cols;
        this.packed = false;
        this.rounded = false;
        return this;
    }

    public float[] x() {
        return x;
    }

    /**
     * When on, the tokens are independent one-token inputs (the decode steps of several sequences): every
     * matrix multiplies each of them exactly as a one-token {@link WeightMatrix#matmul} would (bit for bit:
     * the decode kernels), but reads each weight row from memory once for all of them. {@link #set} keeps
     * the setting. Returns this.
     */
    public Activations eachToken(boolean on) {
        this.eachToken = on;
        return this;
    }

    /** See {@link #eachToken(boolean)}. */
    public boolean isEachToken() {
        return eachToken;
    }

    public int tokens() {
        return n;
    }

    public int cols() {
        return cols;
    }

    /** Number of panels of {@link FloatGemm#PANEL} tokens (the last one padded with zeros). */
    public int panelCount() {
        return (n + PANEL - 1) / PANEL;
    }

    /** The panels ({@code [panel][column][token]}), packed on the first call after {@link #set}. */
    public float[] panels(Parallel pool) {
        if (!packed) {
            long t = StageClock.start();
            ensurePanels();
            pool.forRange(panelCount(), 1, (long) n * cols, (p0, p1) -> FloatGemm.packPanels(x, n, cols, panels, p0, p1));
            packed = true;
            StageClock.stop("gemm.pack (wall)", t);
        }
        return panels;
    }

    /**
     * The panels rounded to int8 ({@code [panel][column][token]}, in shorts), rounded on the first call after
     * {@link #set}; their scales are {@link #int8Scales}. Needs {@code cols} a multiple of {@link #BLOCK}.
     */
    public short[] int8Panels(Parallel pool) {
        return int8Panels(pool, FUSED_ROUNDING);
    }

    /** {@link #int8Panels(Parallel)}, rounding straight from the rows if {@code fused} and nothing has packed the panels. */
    short[] int8Panels(Parallel pool, boolean fused) {
        if (cols % BLOCK != 0) {
            throw new IllegalStateException("int8 blocks need a multiple of " + BLOCK + " columns, got " + cols);
        }
        if (!rounded) {
            int panelCount = panelCount();
            int blocks = cols / BLOCK;
            if (int8.length < panelCount * PANEL * cols) {
                int8 = new short[panelCount * PANEL * cols];
            }
            if (int8Scales.length < panelCount * PANEL * blocks) {
                int8Scales = new float[panelCount * PANEL * blocks];
                int8Sums = new float[panelCount * PANEL * blocks];
            }
            long t = StageClock.start();
            // Each thread rounds its own panels: from the float panels if another kernel has packed them, else
            // straight from the rows, a block of 32 columns at a time through a small buffer that stays in L1 (the
            // float panels are then not built at all: the same values rounded the same way, one pass less).
            boolean fromRows = !packed && fused;
            if (!packed && !fromRows) {
                ensurePanels();
            }
            boolean pack = !packed && !fromRows;
            pool.forRange(panelCount, 1, (long) n * cols, (p0, p1) -> {
                if (fromRows) {
                    roundRows(p0, p1);
                    return;
                }
                if (pack) {
                    FloatGemm.packPanels(x, n, cols, panels, p0, p1);
                }
                round(p0, p1);
            });
            packed |= pack;
            rounded = true;
            StageClock.stop("gemm.pack+int8 (wall)", t);
        }
        return int8;
    }

    /**
     * The scales of {@link #int8Panels} (call that first): {@code [panel][block][PANEL]}, one per token and
     * block of 32 columns; a block's {@link FloatGemm#PANEL} hold the panel's even tokens, then its odd ones,
     * the order in which a kernel that widens 16-bit lane pairs meets them.
     */
    public float[] int8Scales() {
        if (!rounded) {
            throw new IllegalStateException("int8Panels has not run since the last set");
        }
        return int8Scales;
    }

    /**
     * Per token and block of {@link #int8Panels} (call that first), in {@link #int8Scales}' layout and order: the
     * block's scale times the sum of its rounded values ({@code d * sum(q)}), what a weight format with an offset
     * per block ({@code value = scale * q + bias}) multiplies its bias by.
     */
    public float[] int8Sums() {
        if (!rounded) {
            throw new IllegalStateException("int8Panels has not run since the last set");
        }
        return int8Sums;
    }

    private void ensurePanels() {
        int size = panelCount() * PANEL * cols;
        if (panels.length < size) {
            panels = new float[size];
        }
    }

    /**
     * Whether {@link #int8Panels} rounds straight from the rows when the float panels have not been packed
     * ({@code -Dedgelm.int8.fused=true}; off by default: the same bits and no float panels for int8-only inputs, but
     * in the 0.8B Q4_0 prefill, alternating under load 3-7, the stage took 39 and 83 ms a chunk against 94 and 35
     * packed first: no gain shown, docs/lab/prefill.md).
     */
    static final boolean FUSED_ROUNDING = Boolean.parseBoolean(System.getProperty("edgelm.int8.fused", "false"));

    private static final Scratch.Floats BLOCK_BUFFER = new Scratch.Floats();

    /** Rounds packed panels {@code [p0, p1)} into {@link #int8}, {@link #int8Scales} and {@link #int8Sums}. */
    private void round(int p0, int p1) {
        int blocks = cols / BLOCK;
        for (int p = p0; p < p1; p++) {
            int base = p * PANEL * cols;
            for (int b = 0; b < blocks; b++) {
                int kb = base + b * BLOCK * PANEL;
                roundBlock(panels, kb, kb, (p * blocks + b) * PANEL);
            }
        }
    }

    /**
     * Rounds panels {@code [p0, p1)} from the token-major rows: each block of {@link #BLOCK} columns of a panel is
     * laid out as the packed panels would hold it ({@code [column][token]}, zeros past token n) in a per-thread
     * buffer, then rounded by {@link #roundBlock}, so every value meets the same operations as through the panels.
     */
    private void roundRows(int p0, int p1) {
        float[] buf = BLOCK_BUFFER.get(BLOCK * PANEL);
        int blocks = cols / BLOCK;
        for (int p = p0; p < p1; p++) {
            int base = p * PANEL * cols;
            int t0 = p * PANEL;
            int valid = Math.min(PANEL, n - t0);
            for (int b = 0; b < blocks; b++) {
                int k0 = b * BLOCK;
                if (F.length() == 16 && valid == PANEL) {
                    for (int j0 = 0; j0 < PANEL; j0 += 16) {
                        for (int kk = 0; kk < BLOCK; kk += 16) {
                            FloatGemm.Transpose16.block(x, (t0 + j0) * cols + k0 + kk, cols, buf, kk * PANEL + j0, PANEL);
                        }
                    }
                } else {
                    for (int j = 0; j < PANEL; j++) {
                        int xo = (t0 + j) * cols + k0;
                        for (int kk = 0; kk < BLOCK; kk++) {
                            buf[kk * PANEL + j] = j < valid ? x[xo + kk] : 0f;
                        }
                    }
                }
                roundBlock(buf, 0, base + b * BLOCK * PANEL, (p * blocks + b) * PANEL);
            }
        }
    }

    /**
     * One block of one panel: {@code xt[kb + column * PANEL + token]} rounded into {@code int8[dstOff ..]} (the same
     * layout), its scales and sums at {@code dOff}.
     */
    private void roundBlock(float[] xt, int kb, int dstOff, int dOff) {
        short[] xq = int8;
        float[] xd = int8Scales;
        float[] xs = int8Sums;
        int half = F.length();
        FloatVector m0 = FloatVector.zero(F);
        FloatVector m1 = FloatVector.zero(F);
        for (int kk = 0; kk < BLOCK; kk++) {
            int o = kb + kk * PANEL;
            m0 = m0.max(FloatVector.fromArray(F, xt, o).abs());
            m1 = m1.max(FloatVector.fromArray(F, xt, o + half).abs());
        }
        FloatVector d0 = m0.div(127f);
        FloatVector d1 = m1.div(127f);
        FloatVector id0 = FloatVector.broadcast(F, 1f).div(d0).blend(0f, d0.eq(0f));
        FloatVector id1 = FloatVector.broadcast(F, 1f).div(d1).blend(0f, d1.eq(0f));
        // The scales at fp16 precision, as ggml stores them.
        d0.intoArray(xd, dOff);
        d1.intoArray(xd, dOff + half);
        for (int j = dOff; j < dOff + PANEL; j++) {
            xd[j] = Float.float16ToFloat(Float.floatToFloat16(xd[j]));
        }
        FloatVector sum0 = FloatVector.zero(F);
        FloatVector sum1 = FloatVector.zero(F);
        for (int kk = 0; kk < BLOCK; kk++) {
            int o = kb + kk * PANEL;
            // Round to nearest, ties to even: add and remove 1.5 * 2^23.
            FloatVector r0 = FloatVector.fromArray(F, xt, o).mul(id0).add(ROUNDER).sub(ROUNDER);
            FloatVector r1 = FloatVector.fromArray(F, xt, o + half).mul(id1).add(ROUNDER).sub(ROUNDER);
            sum0 = sum0.add(r0); // integers of at most 32 * 127: exact
            sum1 = sum1.add(r1);
            int q = dstOff + kk * PANEL;
            ((ShortVector) r0.convertShape(VectorOperators.F2S, SHORT_HALF, 0)).intoArray(xq, q);
            ((ShortVector) r1.convertShape(VectorOperators.F2S, SHORT_HALF, 0)).intoArray(xq, q + half);
        }
        FloatVector lo = FloatVector.fromArray(F, xd, dOff);
        FloatVector hi = FloatVector.fromArray(F, xd, dOff + half);
        FloatVector s0 = sum0.mul(lo);
        FloatVector s1 = sum1.mul(hi);
        // Even tokens first, then odd: the order in which the 16-bit kernels widen their sums.
        lo.rearrange(EVEN_LANES, hi).intoArray(xd, dOff);
        lo.rearrange(ODD_LANES, hi).intoArray(xd, dOff + half);
        s0.rearrange(EVEN_LANES, s1).intoArray(xs, dOff);
        s0.rearrange(ODD_LANES, s1).intoArray(xs, dOff + half);
    }
}
