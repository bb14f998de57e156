package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.format.ModelMemory;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.Parallel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Once a matrix has made its working copy, every decoder reads the copy and gives the file decoder's values bit for
 * bit; with the file's pages released (they then read as zeros) the matrix still decodes and multiplies as a twin
 * built on an untouched copy of the same bytes.
 */
class WorkingCopyTest {
    private static final int ROWS = 7;

    /** Random blocks of {@code type} with finite random fp16 scales at {@code halfOffsets} of each block. */
    private static byte[] randomBlocks(GgmlType type, int rows, int cols, Random r, int... halfOffsets) {
        byte[] bytes = new byte[(int) (rows * type.byteSize(cols))];
        r.nextBytes(bytes);
        for (int o = 0; o < bytes.length; o += type.typeSize()) {
            for (int h : halfOffsets) {
                Blocks.half(bytes, o + h, Float.floatToFloat16((float) (r.nextGaussian() * 0.02)));
            }
        }
        return bytes;
    }

    /** The bytes in native memory of their own, page-aligned (so that whole pages of it can be released). */
    private static MemorySegment nativeCopy(byte[] bytes, Arena arena) {
        MemorySegment s = arena.allocate(bytes.length, 4096);
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return s;
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]), what + " at " + i);
        }
    }

    private static float[] randomFloats(int n, Random r) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    /** One token through both matrices, then all rows decoded by both: the released one from its copy. */
    private static void checkRows(QuantizedMatrix released, QuantizedMatrix twin, int cols, Random r, Parallel pool,
            RowFile fileRow) {
        float[] x = randomFloats(cols, r);
        float[] a = new float[ROWS];
        float[] b = new float[ROWS];
        released.matmul(pool, x, 1, a);
        twin.matmul(pool, x, 1, b);
        assertSameBits(b, a, "decode product");
        for (int row = 0; row < ROWS; row++) {
            float[] fromCopy = new float[cols];
            float[] fromFile = new float[cols];
            released.decodeRow(row, fromCopy, 0);
            fileRow.decode(row, fromFile);
            assertSameBits(fromFile, fromCopy, "row " + row);
        }
        // a prefill chunk (the integer or float tiles, as this machine's vectors choose) from the copy and from the twin
        int n = 20;
        float[] xs = randomFloats(n * cols, r);
        float[] pa = new float[n * ROWS];
        float[] pb = new float[n * ROWS];
        released.matmul(pool, xs, n, pa);
        twin.matmul(pool, xs, n, pb);
        assertSameBits(pb, pa, "prefill chunk");
    }

    @FunctionalInterface
    interface RowFile {
        void decode(int row, float[] dst);
    }

    /** After the release, the interior pages of the source read as zeros: the copy is all that decodes. */
    private static void assertReleased(WorkingCopy m, MemorySegment src) {
        long released = m.releasedBytes();
        assertTrue(released >= src.byteSize() - 8192, "released " + released + " of " + src.byteSize());
        for (long o = 4096; o < src.byteSize() - 4096; o += 4096) {
            assertEquals(0L, src.get(ValueLayout.JAVA_LONG_UNALIGNED, o), "byte " + o + " still held");
        }
    }

    @Test
    void q4_0DecodersReadTheCopyAfterTheRelease() {
        assumeTrue(Q4_0Matrix.INT_DECODE);
        Random r = new Random(40);
        try (Arena arena = Arena.ofShared(); Parallel pool = new Parallel(2)) {
            // 256: one half group; 1600 (50 blocks): full + padded; 3584 (112): the 0.8B's FFN rows
            for (int cols : new int[] {256, 1600, 3584}) {
                byte[] bytes = randomBlocks(GgmlType.Q4_0, ROWS, cols, r, 0);
                MemorySegment src = nativeCopy(bytes, arena);
                Q4_0Matrix m = new Q4_0Matrix(src, ROWS, cols);
                Q4_0Matrix twin = new Q4_0Matrix(Blocks.segment(bytes), ROWS, cols);
                Q4_0Matrix file = new Q4_0Matrix(Blocks.segment(bytes), ROWS, cols);
                m.releaseFileAfterCopy();
                checkRows(m, twin, cols, r, pool, (row, dst) -> file.decodeRowFile(row, dst, 0));
                assertReleased(m, src);
                int blocks = cols / 32;
                for (int row = 0; row < ROWS; row++) {
                    short[] q = new short[cols];
                    short[] qf = new short[cols];
                    float[] s = new float[blocks];
                    float[] sf = new float[blocks];
                    m.decodeShorts(row, q, 0, s, 0);
                    file.decodeShortsFile(row, qf, 0, sf, 0);
                    assertEquals(java.util.Arrays.toString(qf), java.util.Arrays.toString(q), "row " + row);
                    assertSameBits(sf, s, "scales of row " + row);
                }
            }
        }
    }

    @Test
    void q4_KDecodersReadTheCopyAfterTheRelease() {
        assumeTrue(Q4_KMatrix.INT_DECODE);
        Random r = new Random(41);
        try (Arena arena = Arena.ofShared(); Parallel pool = new Parallel(2)) {
            // 256: 8 sub-blocks (half group); 2560: the 4B's rows (80); 3584 (112)
            for (int cols : new int[] {256, 2560, 3584}) {
                byte[] bytes = randomBlocks(GgmlType.Q4_K, ROWS, cols, r, 0, 2);
                MemorySegment src = nativeCopy(bytes, arena);
                Q4_KMatrix m = new Q4_KMatrix(src, ROWS, cols);
                Q4_KMatrix twin = new Q4_KMatrix(Blocks.segment(bytes), ROWS, cols);
                Q4_KMatrix file = new Q4_KMatrix(Blocks.segment(bytes), ROWS, cols);
                m.releaseFileAfterCopy();
                checkRows(m, twin, cols, r, pool, (row, dst) -> file.decodeRowFile(row, dst, 0));
                assertReleased(m, src);
                int blocks = cols / 32;
                for (int row = 0; row < ROWS; row++) {
                    short[] q = new short[cols];
                    short[] qf = new short[cols];
                    float[] s = new float[blocks];
                    float[] sf = new float[blocks];
                    float[] b = new float[blocks];
                    float[] bf = new float[blocks];
                    m.decodeInts(row, q, 0, s, b, 0);
                    file.decodeIntsFile(row, qf, 0, sf, bf, 0);
                    assertEquals(java.util.Arrays.toString(qf), java.util.Arrays.toString(q), "row " + row);
                    assertSameBits(sf, s, "scales of row " + row);
                    assertSameBits(bf, b, "biases of row " + row);
                }
            }
        }
    }

    @Test
    void q6_KDecodeRowReadsTheCopyAfterTheRelease() {
        assumeTrue(Q6_KMatrix.INT8);
        Random r = new Random(42);
        try (Arena arena = Arena.ofShared(); Parallel pool = new Parallel(2)) {
            // 256: one super-block (a tail); 768: a pair and a tail; 1024: two pairs
            for (int cols : new int[] {256, 768, 1024}) {
                byte[] bytes = randomBlocks(GgmlType.Q6_K, ROWS, cols, r, 208);
                MemorySegment src = nativeCopy(bytes, arena);
                Q6_KMatrix m = new Q6_KMatrix(src, ROWS, cols);
                Q6_KMatrix twin = new Q6_KMatrix(Blocks.segment(bytes), ROWS, cols);
                Q6_KMatrix file = new Q6_KMatrix(Blocks.segment(bytes), ROWS, cols);
                m.releaseFileAfterCopy();
                checkRows(m, twin, cols, r, pool, (row, dst) -> file.decodeRowFile(row, dst, 0));
                assertReleased(m, src);
            }
        }
    }

    /**
     * Every row length from 1 to 72 blocks (Q4_0) and 1 to 9 super-blocks (Q4_K), so that every lane position of a
     * group, full groups, padded last groups and half-width last groups (at G = 32 and, under {@code -XX:UseAVX=2},
     * G = 16) all decode: from the copy, at an offset into a larger array, the file decoder's values bit for bit and
     * nothing written outside the row.
     */
    @Test
    void copyDecodersAgreeWithTheFileAtEveryRowLength() {
        assumeTrue(Q4_0Matrix.INT_DECODE && Q4_KMatrix.INT_DECODE);
        Random r = new Random(44);
        int rows = 3;
        for (int bl = 1; bl <= 72; bl++) {
            int blocks = bl;
            int cols = 32 * blocks;
            byte[] bytes = randomBlocks(GgmlType.Q4_0, rows, cols, r, 0);
            Q4_0Matrix m = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
            Q4_0Matrix file = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
            m.makeCopy(null);
            for (int rr = 0; rr < rows; rr++) {
                int row = rr;
                checkFloatRow(cols, "Q4_0 " + blocks + " blocks, row " + row,
                        (dst, off) -> m.decodeRow(row, dst, off), (dst, off) -> file.decodeRowFile(row, dst, off));
                checkIntRow(cols, blocks, false, "Q4_0 " + blocks + " blocks, row " + row,
                        (q, off, sc, bi, sOff) -> m.decodeShorts(row, q, off, sc, sOff),
                        (q, off, sc, bi, sOff) -> file.decodeShortsFile(row, q, off, sc, sOff));
            }
        }
        for (int sbl = 1; sbl <= 9; sbl++) {
            int superBlocks = sbl;
            int cols = 256 * superBlocks;
            byte[] bytes = randomBlocks(GgmlType.Q4_K, rows, cols, r, 0, 2);
            Q4_KMatrix m = new Q4_KMatrix(Blocks.segment(bytes), rows, cols);
            Q4_KMatrix file = new Q4_KMatrix(Blocks.segment(bytes), rows, cols);
            m.makeCopy(null);
            for (int rr = 0; rr < rows; rr++) {
                int row = rr;
                checkFloatRow(cols, "Q4_K " + superBlocks + " super-blocks, row " + row,
                        (dst, off) -> m.decodeRow(row, dst, off), (dst, off) -> file.decodeRowFile(row, dst, off));
                checkIntRow(cols, cols / 32, true, "Q4_K " + superBlocks + " super-blocks, row " + row,
                        (q, off, sc, bi, sOff) -> m.decodeInts(row, q, off, sc, bi, sOff),
                        (q, off, sc, bi, sOff) -> file.decodeIntsFile(row, q, off, sc, bi, sOff));
            }
        }
    }

    /** Q6_K rows of 1 to 6 super-blocks (pairs and an odd tail), from the copy at an offset, as the file decodes them. */
    @Test
    void q6_KCopyDecoderAgreesWithTheFileAtEveryRowLength() {
        assumeTrue(Q6_KMatrix.INT8);
        Random r = new Random(45);
        int rows = 3;
        for (int sbl = 1; sbl <= 6; sbl++) {
            int superBlocks = sbl;
            int cols = 256 * superBlocks;
            byte[] bytes = randomBlocks(GgmlType.Q6_K, rows, cols, r, 208);
            Q6_KMatrix m = new Q6_KMatrix(Blocks.segment(bytes), rows, cols);
            Q6_KMatrix file = new Q6_KMatrix(Blocks.segment(bytes), rows, cols);
            m.makeCopy(null);
            for (int rr = 0; rr < rows; rr++) {
                int row = rr;
                checkFloatRow(cols, "Q6_K " + superBlocks + " super-blocks, row " + row,
                        (dst, off) -> m.decodeRow(row, dst, off), (dst, off) -> file.decodeRowFile(row, dst, off));
            }
        }
    }

    @FunctionalInterface
    interface FloatRow {
        void decode(float[] dst, int off);
    }

    @FunctionalInterface
    interface IntRow {
        void decode(short[] q, int off, float[] scale, float[] bias, int sOff);
    }

    /** The row decoded at offset 37 into an array of sentinels: the file's bits inside, the sentinels around. */
    static void checkFloatRow(int cols, String what, FloatRow copy, FloatRow file) {
        int off = 37;
        float[] a = new float[cols + 2 * off];
        float[] b = new float[cols + 2 * off];
        java.util.Arrays.fill(a, -1234.5f);
        java.util.Arrays.fill(b, -1234.5f);
        copy.decode(a, off);
        file.decode(b, off);
        assertSameBits(b, a, what);
        assertEquals(-1234.5f, a[off - 1], what);
        assertEquals(-1234.5f, a[off + cols], what);
    }

    static void checkIntRow(int cols, int blocks, boolean biased, String what, IntRow copy, IntRow file) {
        int off = 37;
        int sOff = 5;
        short[] q = new short[cols + 2 * off];
        short[] qf = new short[cols + 2 * off];
        java.util.Arrays.fill(q, (short) 99);
        java.util.Arrays.fill(qf, (short) 99);
        float[] s = new float[blocks + 2 * sOff];
        float[] sf = new float[blocks + 2 * sOff];
        float[] b = new float[blocks + 2 * sOff];
        float[] bf = new float[blocks + 2 * sOff];
        copy.decode(q, off, s, biased ? b : null, sOff);
        file.decode(qf, off, sf, biased ? bf : null, sOff);
        assertEquals(java.util.Arrays.toString(qf), java.util.Arrays.toString(q), what);
        assertSameBits(sf, s, what + " scales");
        assertSameBits(bf, b, what + " biases");
    }

    @Test
    void aTensorOfSeveralSlabsIsReleasedWholeAndDecodesFromTheCopy() {
        assumeTrue(Q4_0Matrix.INT_DECODE);
        Random r = new Random(43);
        int cols = 3584;
        // 18 MiB of Q4_0: two slabs, the boundary inside a page
        int rows = (int) (LazyCopy.SLAB / GgmlType.Q4_0.byteSize(cols)) + 700;
        try (Arena arena = Arena.ofShared(); Parallel pool = new Parallel(2)) {
            byte[] bytes = randomBlocks(GgmlType.Q4_0, rows, cols, r, 0);
            MemorySegment src = nativeCopy(bytes, arena);
            Q4_0Matrix m = new Q4_0Matrix(src, rows, cols);
            Q4_0Matrix file = new Q4_0Matrix(Blocks.segment(bytes), rows, cols);
            m.releaseFileAfterCopy();
            m.matmul(pool, randomFloats(cols, r), 1, new float[rows]);
            assertEquals(src.byteSize() / 4096 * 4096, m.releasedBytes(), "every whole page of the tensor");
            for (long o = 0; o + 8 <= src.byteSize() / 4096 * 4096; o += 512) {
                assertEquals(0L, src.get(ValueLayout.JAVA_LONG_UNALIGNED, o), "byte " + o + " still held");
            }
            int boundary = (int) (LazyCopy.SLAB / GgmlType.Q4_0.byteSize(cols));
            for (int row : new int[] {0, boundary - 1, boundary, rows - 1}) {
                float[] fromCopy = new float[cols];
                float[] fromFile = new float[cols];
                m.decodeRow(row, fromCopy, 0);
                file.decodeRowFile(row, fromFile, 0);
                assertSameBits(fromFile, fromCopy, "row " + row);
            }
        }
    }

    @Test
    void releaseFreesWholePagesOnly() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(5 * 4096, 4096).asSlice(100, 4 * 4096);
            s.fill((byte) 7);
            long released = ModelMemory.release(s);
            assumeTrue(released > 0, "no madvise here");
            assertEquals(3 * 4096, released);
            assertEquals(7, s.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(7, s.get(ValueLayout.JAVA_BYTE, 4096 - 101));
            assertEquals(0, s.get(ValueLayout.JAVA_BYTE, 4096 - 100));
            assertEquals(0, s.get(ValueLayout.JAVA_BYTE, 4 * 4096 - 101));
            assertEquals(7, s.get(ValueLayout.JAVA_BYTE, 4 * 4096 - 100));
        }
    }
}
