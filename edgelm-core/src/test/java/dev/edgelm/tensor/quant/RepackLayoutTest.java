package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The working copies' bytes, padding included, against the layouts written out one element at a time from their
 * definitions ({@link Q4Lanes}, {@link Q6_KLanes} class comments), at row lengths with and without a half-width or
 * odd last group.
 */
class RepackLayoutTest {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);

    private static MemorySegment random(long bytes, Random r) {
        byte[] b = new byte[(int) bytes];
        r.nextBytes(b);
        return MemorySegment.ofArray(b);
    }

    private static int width(int b, int cols) {
        return b / Q4Lanes.G < Q4Lanes.fullGroups(cols) ? Q4Lanes.G : Q4Lanes.H;
    }

    private static short nibbles(int u) {
        return (short) ((u & 0xF) | (u >>> 4 & 0xF0) | (u >>> 8 & 0xF00) | (u >>> 12 & 0xF000));
    }

    private static float fp16(MemorySegment s, long o) {
        return Float.float16ToFloat(s.get(SHORT, o));
    }

    @Test
    void q4_0CopyIsTheLayoutElementByElement() {
        Random r = new Random(3);
        for (int blocks : new int[] {1, 8, 16, 17, 32, 33, 50, 80, 112}) {
            int cols = 32 * blocks, rows = 3;
            MemorySegment src = random((long) rows * blocks * 18, r);
            MemorySegment expected = MemorySegment.ofArray(new byte[(int) Q4Lanes.byteSize(Q4Lanes.Format.Q4_0, rows, cols)]);
            long dstRow = Q4Lanes.rowBytes(Q4Lanes.Format.Q4_0, cols);
            for (int row = 0; row < rows; row++) {
                for (int b = 0; b < blocks; b++) {
                    long o = (long) row * blocks * 18 + 18L * b;
                    long g = row * dstRow + (long) (b / Q4Lanes.G) * Q4Lanes.Format.Q4_0.groupBytes;
                    int j = b % Q4Lanes.G, w = width(b, cols);
                    expected.set(FLOAT, g + 16L * w + 4L * j, fp16(src, o));
                    for (int k = 0; k < 4; k++) {
                        int u = src.get(U32, o + 2 + 4 * k);
                        expected.set(SHORT, g + 2L * (k * w + j), nibbles(u));
                        expected.set(SHORT, g + 2L * ((k + 4) * w + j), nibbles(u >>> 4));
                    }
                }
            }
            MemorySegment copy = Q4Lanes.of(Q4Lanes.Format.Q4_0, src, rows, cols, null).packed;
            assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE), copy.toArray(ValueLayout.JAVA_BYTE), "Q4_0 " + cols);
        }
    }

    @Test
    void q4_KCopyIsTheLayoutElementByElement() {
        Random r = new Random(4);
        for (int superBlocks : new int[] {1, 2, 3, 4, 10, 14}) {
            int cols = 256 * superBlocks, rows = 3;
            MemorySegment src = random((long) rows * superBlocks * 144, r);
            MemorySegment expected = MemorySegment.ofArray(new byte[(int) Q4Lanes.byteSize(Q4Lanes.Format.Q4_K, rows, cols)]);
            long dstRow = Q4Lanes.rowBytes(Q4Lanes.Format.Q4_K, cols);
            for (int row = 0; row < rows; row++) {
                for (int sb = 0; sb < superBlocks; sb++) {
                    long o = (long) row * superBlocks * 144 + 144L * sb;
                    float d = fp16(src, o), dmin = fp16(src, o + 2);
                    long sc = KScales.scales(src.get(U64, o + 4), src.get(U32, o + 12));
                    long mn = KScales.mins(src.get(U64, o + 4), src.get(U32, o + 12));
                    for (int t = 0; t < 8; t++) {
                        int b = 8 * sb + t;
                        long g = row * dstRow + (long) (b / Q4Lanes.G) * Q4Lanes.Format.Q4_K.groupBytes;
                        int j = b % Q4Lanes.G, w = width(b, cols);
                        expected.set(FLOAT, g + 16L * w + 4L * j, d * KScales.at(sc, t));
                        expected.set(FLOAT, g + 20L * w + 4L * j, dmin * KScales.at(mn, t));
                        for (int k = 0; k < 8; k++) {
                            int u = src.get(U32, o + 16 + 32 * (t / 2) + 4 * k);
                            expected.set(SHORT, g + 2L * (k * w + j), nibbles(t % 2 == 0 ? u : u >>> 4));
                        }
                    }
                }
            }
            MemorySegment copy = Q4Lanes.of(Q4Lanes.Format.Q4_K, src, rows, cols, null).packed;
            assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE), copy.toArray(ValueLayout.JAVA_BYTE), "Q4_K " + cols);
        }
    }

    @Test
    void q6_KCopyIsTheLayoutElementByElement() {
        Random r = new Random(5);
        for (int blocks : new int[] {1, 2, 3, 4, 5}) {
            int cols = 256 * blocks, rows = 3;
            MemorySegment src = random((long) rows * blocks * 210, r);
            MemorySegment expected = MemorySegment.ofArray(new byte[(int) (Q6_KLanes.rowBytes(blocks) * rows)]);
            for (int row = 0; row < rows; row++) {
                long base = row * Q6_KLanes.rowBytes(blocks);
                for (int b = 0; b < blocks; b++) {
                    long o = (long) row * blocks * 210 + 210L * b;
                    boolean tail = b >= 2 * (blocks / 2);
                    int width = tail ? 16 : 32, first = tail ? 0 : 16 * (b & 1);
                    long at = base + (long) (b / 2) * Q6_KLanes.PAIR_BYTES;
                    for (int v = 0; v < 256; v++) {
                        int h = v / 128, quarter = v % 128 / 32, l = v % 32;
                        int ql = src.get(ValueLayout.JAVA_BYTE, o + 64 * h + 32 * (quarter & 1) + l) & 0xFF;
                        int qh = src.get(ValueLayout.JAVA_BYTE, o + 128 + 32 * h + l) & 0xFF;
                        int q = (ql >> 4 * (quarter >> 1) & 0x0F | (qh >> 2 * quarter & 3) << 4) - 32;
                        // lane order: element k = v % 16 of sub-block v / 16
                        expected.set(ValueLayout.JAVA_BYTE, at + (long) width * (v % 16) + first + v / 16, (byte) q);
                    }
                    long scales = at + 16L * width;
                    for (int g = 0; g < 16; g++) {
                        expected.set(ValueLayout.JAVA_BYTE, scales + first + g, src.get(ValueLayout.JAVA_BYTE, o + 192 + g));
                    }
                    expected.set(FLOAT, scales + width + 4L * (first / 16), fp16(src, o + 208));
                }
            }
            MemorySegment copy = Q6_KLanes.repack(src, rows, cols, Arena.ofAuto(), null);
            assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE), copy.toArray(ValueLayout.JAVA_BYTE), "Q6_K " + cols);
        }
    }
}
