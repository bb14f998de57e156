package dev.edgelm.tensor.quant;

import static dev.edgelm.tensor.quant.Simd.F;
import static dev.edgelm.tensor.quant.Simd.L;

import dev.edgelm.tensor.Activations;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import dev.edgelm.tensor.Scratch;
import dev.edgelm.tensor.WeightMatrix;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * A matrix stored in one of ggml's block formats: each row is {@code cols / blockSize} blocks of
 * {@code typeSize} bytes, read in place from the segment (never dequantised as a whole).
 *
 * <p>Values that carry an offset per run ({@code q * d + m}, {@code d * sc * q - dmin * min}) can split the dot
 * product of a run into {@code d * sum(q * x) + m * sum(x)}: the kernel ({@link #dot}) then needs one
 * multiply-add per value instead of two, and the sums of x over each run, computed once per one-token
 * {@link #matmul} and shared by every row. Q4_1, Q4_K and Q5_K do (runs of 32: their constructors pass the run
 * length). Q5_1 and Q2_K do not: their kernels fold the offset into each value ({@code q.fma(d, m)}, then the
 * multiply-add with x), two multiply-adds per value, and pass a run length of 0 (no sums); nor do the formats
 * without an offset (Q3_K, Q6_K, Q4_0, Q5_0, Q8_0).
 */
public abstract class QuantizedMatrix extends WeightMatrix {
    /** Per calling thread: the run sums of the activations of the current one-token matmul. */
    private static final Scratch.Floats RUN_SUMS = new Scratch.Floats();

    protected final GgmlType type;
    protected final long rowBytes;
    protected final int blocksPerRow;
    /**
     * Entries past the last run sum that the sum arrays hold: the 16-lane K-quant kernels load a
     * super-block's 8 run sums as one 16-lane vector and ignore its upper half.
     */
    static final int SUM_PAD = 8;
    /** Length of the runs of x that {@link #dot} needs summed (16 or 32), or 0 when it needs none. */
    private final int sumRun;

    protected QuantizedMatrix(GgmlType type, MemorySegment data, int rows, int cols, int sumRun) {
        super(data, rows, cols);
        checkShape(type, data, rows, cols, type + " matrix");
        this.type = type;
        this.rowBytes = type.byteSize(cols);
        this.blocksPerRow = cols / type.blockSize();
        this.sumRun = sumRun;
    }

    /**
     * Dot product of row {@code row} with {@code x[xOff .. xOff+cols)}; {@code xSums[k]} is the sum of
     * {@code x[xOff + k * run ..]} over one run (null when the format needs no sums).
     */
    protected abstract float dot(int row, float[] x, int xOff, float[] xSums);

    @Override
    public final float dotRow(int row, float[] x, int xOff) {
        return dot(row, x, xOff, sumRun == 0 ? null : runSums(x, xOff, new float[cols / sumRun + SUM_PAD]));
    }

    @Override
    protected void multiply(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (in.tokens() != 1) {
            super.multiply(pool, in, out, outStride, outOff);
            return;
        }
        float[] x = in.x();
        float[] sums = null;
        if (sumRun != 0) {
            sums = runSums(x, 0, RUN_SUMS.get(cols / sumRun + SUM_PAD));
        }
        float[] xSums = sums;
        pool.forRange(rows, 1, (long) rows * cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out[outOff + r] = dot(r, x, 0, xSums);
            }
        });
    }

    /**
     * Independent tokens: each as the one-token {@link #multiply} computes it (its run sums included), each
     * row read from memory once for all of them.
     */
    @Override
    protected void multiplyEach(Parallel pool, Activations in, float[] out, int outStride, int outOff) {
        if (sumRun == 0) {
            super.multiplyEach(pool, in, out, outStride, outOff);
            return;
        }
        int n = in.tokens();
        float[] x = in.x();
        float[][] sums = new float[n][];
        for (int t = 0; t < n; t++) {
            sums[t] = runSums(x, t * cols, new float[cols / sumRun + SUM_PAD]);
        }
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int t = 0; t < n; t++) {
                    out[t * outStride + outOff + r] = dot(r, x, t * cols, sums[t]);
                }
            }
        });
    }

    /** Per calling thread: the activations {@linkplain Q8_0Matrix#interleave interleaved} for {@link #multiplyInterleaved}. */
    private static final Scratch.Floats INTERLEAVED = new Scratch.Floats();

    /** A written-out 8-lane row kernel over x {@linkplain Q8_0Matrix#interleave interleaved} (and x's run sums, or null). */
    @FunctionalInterface
    interface InterleavedDot {
        float dot(int row, float[] xi, int xOff, float[] xSums);
    }

    /**
     * The 8-lane one-token and independent-tokens product of the formats whose kernel reads x {@linkplain
     * Q8_0Matrix#interleave interleaved} (Q4_K, Q5_K, Q6_K): each token interleaved, and its run sums taken, once
     * per call, then {@code kernel} per row and token, so that every token's result is the one-token product's,
     * bit for bit.
     */
    final void multiplyInterleaved(Parallel pool, Activations in, float[] out, int outStride, int outOff,
            InterleavedDot kernel) {
        int n = in.tokens();
        float[] x = in.x();
        float[] xi = INTERLEAVED.get(n * cols);
        float[][] sums = new float[n][];
        for (int t = 0; t < n; t++) {
            Q8_0Matrix.interleave(x, t * cols, cols, xi, t * cols);
            if (sumRun != 0) {
                int length = cols / sumRun + SUM_PAD;
                sums[t] = runSums(x, t * cols, n == 1 ? RUN_SUMS.get(length) : new float[length]);
            }
        }
        pool.forRange(rows, 1, (long) rows * cols * n, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int t = 0; t < n; t++) {
                    out[t * outStride + outOff + r] = kernel.dot(r, xi, t * cols, sums[t]);
                }
            }
        });
    }

    final float[] runSums(float[] x, int xOff, float[] sums) {
        for (int k = 0; k < cols / sumRun; k++) {
            FloatVector s = FloatVector.zero(F);
            for (int c = 0; c < sumRun; c += L) {
                s = s.add(FloatVector.fromArray(F, x, xOff + k * sumRun + c));
            }
            // a fixed order (Simd.sum): reduceLanes sums in another order interpreted than compiled,
            // and dotRow, the one-token and the many-token products must agree bit for bit
            sums[k] = Simd.sum(s);
        }
        return sums;
    }

    @Override
    public final String typeName() {
        return type.name();
    }

    /**
     * Checks that a {@code [rows, cols]} matrix of {@code type} fits {@code data} exactly: rows whole
     * blocks long and {@code rows * rowBytes} bytes in all. {@code what} names the matrix in the message.
     */
    static void checkShape(GgmlType type, MemorySegment data, long rows, long cols, String what) {
        if (rows < 0 || cols <= 0 || cols % type.blockSize() != 0) {
            throw new EdgeLmException(what + " has " + cols + " columns, but " + type
                    + " stores values in blocks of " + type.blockSize() + " (a row must be a positive multiple of it)");
        }
        long expected = rows * type.byteSize(cols);
        if (data.byteSize() != expected) {
            throw new EdgeLmException(what + " [" + rows + ", " + cols + "] of type " + type + " needs " + expected
                    + " bytes, found " + data.byteSize());
        }
    }
}
