package dev.edgelm.tensor.quant;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector shapes shared by the block kernels. Quantised values are loaded {@link #BL} bytes at a time and
 * widened to {@link #P} float vectors of {@link #L} lanes each: with AVX-512 that is 16 bytes to one
 * 16-lane vector, with AVX2 8 bytes to one 8-lane vector, with 128-bit SIMD 8 bytes to two 4-lane
 * vectors. Every block format groups its values in runs of 16 or 32 that share a scale, so a vector never
 * straddles two scales as long as {@code L <= 16}; wider preferred shapes are capped at 512 bits.
 *
 * <p>The kernels write their vector code inline rather than through helpers returning vectors: C2 will not
 * inline a helper it has already compiled on its own into a large method, and then boxes every vector
 * the helper returns (a heap allocation per call).
 */
final class Simd {
    static final VectorSpecies<Float> F = switch (Integer.getInteger("edgelm.simd.bits", 0)) {
        // a forced width (e.g. 512 on an AVX2 machine, then run by the Vector API's Java fallback): only
        // to test every kernel shape on one machine
        case 128 -> FloatVector.SPECIES_128;
        case 256 -> FloatVector.SPECIES_256;
        case 512 -> FloatVector.SPECIES_512;
        default -> FloatVector.SPECIES_PREFERRED.length() > 16 ? FloatVector.SPECIES_512 : FloatVector.SPECIES_PREFERRED;
    };
    static final int L = F.length();
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class,
            VectorShape.forBitSize(8 * Math.max(8, L)));
    static final int BL = B.length();
    static final int P = BL / L;

    /**
     * Whether the written-out 8-lane (AVX2) decode kernels (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) run: on 256-bit float vectors,
     * unless {@code -Dedgelm.kernels8=false} keeps the generic loops (to measure one against the other).
     */
    static final boolean K8 = L == 8 && Boolean.parseBoolean(System.getProperty("edgelm.kernels8", "true"));

    // lane i to lane i ^ k: the steps of sum's fixed reduction tree (the written-out 16-lane kernels take the same
    // steps in their own code, e.g. Q4_KMatrix.dot16)
    static final VectorShuffle<Float> SWAP8 = L >= 16 ? VectorShuffle.fromOp(F, i -> i ^ 8) : null;
    static final VectorShuffle<Float> SWAP4 = L >= 8 ? VectorShuffle.fromOp(F, i -> i ^ 4) : null;
    static final VectorShuffle<Float> SWAP2 = L >= 4 ? VectorShuffle.fromOp(F, i -> i ^ 2) : null;
    static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);

    /** The fp16 scales of the blocks, as the kernels read them and the quantisers write them. */
    static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Simd() {}

    /**
     * The sum of a vector's lanes in one fixed order, a tree that adds lane i ^ k to lane i for k = L/2, ..., 2, 1
     * (at 8 lanes {@code ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7))}), whether the code runs compiled or
     * interpreted: {@code reduceLanes} sums in another order in the interpreter than in C2's code, so a kernel
     * interpreted in one call and compiled in the next would give other bits. Every decode kernel ends with it,
     * so that one-token and many-token products (batched decode) agree bit for bit from the first call on, at
     * every vector width (AVX2 and AVX-512 alike).
     */
    static float sum(FloatVector v) {
        if (L >= 16) {
            v = v.add(v.rearrange(SWAP8));
        }
        if (L >= 8) {
            v = v.add(v.rearrange(SWAP4));
        }
        if (L >= 4) {
            v = v.add(v.rearrange(SWAP2));
        }
        return v.add(v.rearrange(SWAP1)).lane(0);
    }

    /**
     * {@link #sum} of an 8-lane vector, of the eight values at {@code a[off..]}, in the same order (so the same bits):
     * the many-token kernels store their accumulators and sum them here, because C2 stops inlining calls
     * into a method that large (NodeCountInliningCutoff) and would box every vector passed to one.
     */
    static float sum8(float[] a, int off) {
        return ((a[off] + a[off + 4]) + (a[off + 2] + a[off + 6])) + ((a[off + 1] + a[off + 5]) + (a[off + 3] + a[off + 7]));
    }

    /** An IEEE half at {@code off}, widened exactly (ggml's {@code GGML_FP16_TO_FP32}). */
    static float fp16(MemorySegment s, long off) {
        return Float.float16ToFloat(s.get(LE_SHORT, off));
    }

    static int u32(MemorySegment s, long off) {
        return s.get(LE_INT, off);
    }

    /**
     * Eight bytes at {@code off}, byte k in bits 8k..8k+7. The kernels read a super-block's packed scales
     * as one or two words and pick bytes out with shifts: a scalar segment read per scale byte costs more
     * than the vector work it scales.
     */
    static long u64(MemorySegment s, long off) {
        return s.get(LE_LONG, off);
    }
}
