package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * The Q8_0 and Q4_0 quantisers against bytes worked out by hand from ggml's reference quantisers
 * ({@code quantize_row_q8_0_ref}, {@code quantize_row_q4_0_ref}). The llama.cpp-written files give the
 * bulk check ({@link LlamaCppFilesTest}).
 */
class QuantizeTest {

    private static byte[] q8(float... x) {
        float[] src = new float[3 + 32];
        System.arraycopy(x, 0, src, 3, x.length);
        MemorySegment dst = Arena.ofAuto().allocate(5 + 34);
        Q8_0Matrix.quantize(src, 3, 32, dst, 5);
        return dst.asSlice(5).toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] q4(float... x) {
        float[] src = new float[32];
        System.arraycopy(x, 0, src, 0, x.length);
        MemorySegment dst = Arena.ofAuto().allocate(18);
        Q4_0Matrix.quantize(src, 0, 32, dst, 0);
        return dst.toArray(ValueLayout.JAVA_BYTE);
    }

    /** fp16 bits (little-endian) followed by the given bytes, zero-padded to {@code size}. */
    private static byte[] block(int size, int half, int... rest) {
        byte[] b = new byte[size];
        b[0] = (byte) half;
        b[1] = (byte) (half >> 8);
        for (int i = 0; i < rest.length; i++) {
            b[2 + i] = (byte) rest[i];
        }
        return b;
    }

    @Test
    void q8_0RoundsHalvesAwayFromZero() {
        // amax 127 -> d = 1 (0x3C00), 1/d = 1: q = roundf(x)
        assertArrayEquals(block(34, 0x3C00, 127, -127, 3, -3, 1, -1, 1, -2, 0),
                q8(127f, -127f, 2.5f, -2.5f, 0.5f, -0.5f, 1.49f, -1.5f, 0f));
    }

    @Test
    void q8_0NegativeExtremeSetsTheScale() {
        // amax comes from -254 -> d = 2 (0x4000); 3 / 2 = 1.5 -> 2; -1 / 2 = -0.5 -> -1
        assertArrayEquals(block(34, 0x4000, -127, 2, -1), q8(-254f, 3f, -1f));
    }

    @Test
    void q8_0AllZero() {
        assertArrayEquals(new byte[34], q8());
    }

    @Test
    void q8_0ScaleRoundsToNearestHalf() {
        // d = 1/127 = 2^-7 * 128/127; 10-bit fraction 1024/127 = 8.06 -> 8: 0x2008. 1/d is 127 up to float
        // rounding: x = 1 -> 127, x = 0.25 -> 31.75 -> 32, x = -0.1 -> -12.7 -> -13
        assertArrayEquals(block(34, 0x2008, 127, 32, -13), q8(1f, 0.25f, -0.1f));
    }

    @Test
    void q8_0LargestAndSubnormalScales() {
        // amax 65504 * 127 -> d = 65504, the largest finite half (0x7BFF)
        assertArrayEquals(block(34, 0x7BFF, -127, 1), q8(-65504f * 127, 65504f));
        // amax 127 * 2^-24 -> d = 2^-24, the smallest subnormal half (0x0001); 1/d = 2^24
        assertArrayEquals(block(34, 0x0001, 127, -3), q8(127 * 0x1p-24f, -3 * 0x1p-24f));
        // amax 1e9 -> d = 7.87e6 overflows the half range: stored as +inf (0x7C00) as ggml does; the quants
        // still use the float d: 4e8 / d = 50.8 -> 51
        assertArrayEquals(block(34, 0x7C00, 127, 51), q8(1e9f, 4e8f));
    }

    @Test
    void q4_0TruncatesAfterAddingEightAndAHalf() {
        // max = -8 -> d = 1 (0x3C00), 1/d = 1; nibble = min(15, (int) (x + 8.5))
        // low nibbles: -8 -> 0, 7 -> 15, 7.6 -> 16 -> 15, 0.4 -> 8, 0.5 -> 9, -0.5 -> 8, -0.6 -> 7, 3 -> 11, 0 -> 8
        // high nibbles: x[16] = -7.9 -> 0, x[17] = 6.4 -> 14, the rest 0 -> 8
        float[] x = new float[32];
        float[] lo = {-8f, 7f, 7.6f, 0.4f, 0.5f, -0.5f, -0.6f, 3f};
        System.arraycopy(lo, 0, x, 0, lo.length);
        x[16] = -7.9f;
        x[17] = 6.4f;
        int[] nibbles = {0x00, 0xEF, 0x8F, 0x88, 0x89, 0x88, 0x87, 0x8B, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
        assertArrayEquals(block(18, 0x3C00, nibbles), q4(x));
    }

    @Test
    void q4_0SignedMaxAndTies() {
        // largest magnitude +4 (first of the tie with -4) -> d = -0.5 (0xB800), 1/d = -2:
        // 4 -> -8 + 8.5 -> 0; -4 -> 16.5 -> 16 -> 15; 1 -> 6.5 -> 6
        assertArrayEquals(block(18, 0xB800, 0x80, 0x8F, 0x86, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
                0x88, 0x88, 0x88, 0x88), q4(4f, -4f, 1f));
        // -4 first -> d = 0.5 (0x3800), 1/d = 2: -4 -> 0, 4 -> 15
        assertArrayEquals(block(18, 0x3800, 0x80, 0x8F, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
                0x88, 0x88, 0x88, 0x88), q4(-4f, 4f));
    }

    @Test
    void q4_0AllZero() {
        // d = 0 / -8 = -0.0, stored as 0x8000; 1/d taken as 0: every nibble is (int) 8.5 = 8
        int[] nibbles = new int[16];
        java.util.Arrays.fill(nibbles, 0x88);
        assertArrayEquals(block(18, 0x8000, nibbles), q4());
    }

    @Test
    void partialBlocksAreRejected() {
        MemorySegment dst = Arena.ofAuto().allocate(64);
        assertThrows(IllegalArgumentException.class, () -> Q8_0Matrix.quantize(new float[40], 0, 40, dst, 0));
        assertThrows(IllegalArgumentException.class, () -> Q4_0Matrix.quantize(new float[40], 0, 40, dst, 0));
    }
}
