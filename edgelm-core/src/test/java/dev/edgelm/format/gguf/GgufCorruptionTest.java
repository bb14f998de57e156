package dev.edgelm.format.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Truncated, bit-flipped and hand-corrupted headers: only EdgeLmException, never another failure. */
class GgufCorruptionTest {
    private static byte[] valid;
    private static long dataEnd;

    @BeforeAll
    static void writeSmallFile(@TempDir Path dir) {
        Path p = dir.resolve("small.gguf");
        GgufTestFiles.write(p, GgufTestFiles.everyType(), GgufTestFiles.someTensors());
        valid = GgufTestFiles.bytes(p);
        try (GgufFile g = GgufFile.read(MemorySegment.ofArray(valid), "small")) {
            GgufTensorInfo last = g.tensorInfos().get("c.norm");
            dataEnd = g.dataOffset() + last.offset() + last.byteSize();
        }
    }

    /** Parses; returns null on success or the EdgeLmException; fails the test on anything else. */
    private static EdgeLmException parse(byte[] bytes, String what) {
        try (GgufFile g = GgufFile.read(MemorySegment.ofArray(bytes), "fuzz")) {
            g.tensors().forEach(t -> t.data().byteSize());
            return null;
        } catch (EdgeLmException e) {
            assertTrue(e.getMessage().startsWith("fuzz: "), "names the file: " + e.getMessage());
            return e;
        } catch (Throwable t) {
            fail(what + ": " + t, t);
            return null;
        }
    }

    @Test
    void everyTruncationIsACleanError() {
        for (int len = 0; len < valid.length; len++) {
            EdgeLmException e = parse(java.util.Arrays.copyOf(valid, len), "truncated to " + len);
            if (len < dataEnd) {
                assertTrue(e != null, "truncated to " + len + " of " + valid.length + " must fail");
            }
        }
    }

    @Test
    void randomBitFlipsNeverEscapeAsAnotherException() {
        Random rnd = new Random(20260214);
        int headerEnd = (int) (dataEnd - 160); // flips land in the header and the first tensor bytes
        int failures = 0;
        for (int i = 0; i < 4000; i++) {
            byte[] b = valid.clone();
            int flips = 1 + rnd.nextInt(3);
            for (int f = 0; f < flips; f++) {
                int pos = rnd.nextInt(headerEnd);
                b[pos] ^= (byte) (1 << rnd.nextInt(8));
            }
            failures += parse(b, "flip set " + i) != null ? 1 : 0;
        }
        assertTrue(failures > 1000, "most flips are detected, got " + failures);
    }

    @Test
    void randomBytesInCountsAndLengthsNeverEscape() {
        Random rnd = new Random(7);
        for (int i = 0; i < 3000; i++) {
            byte[] b = valid.clone();
            int pos = rnd.nextInt((int) dataEnd - 8);
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(pos, rnd.nextLong() >>> rnd.nextInt(64));
            parse(b, "random u64 at " + pos);
        }
    }

    private static byte[] smallFile(Map<String, GgufValue> meta, List<GgufTestFiles.Tensor> tensors, @TempDir Path dir) {
        Path p = dir.resolve("c" + System.nanoTime() + ".gguf");
        GgufTestFiles.write(p, meta, tensors);
        return GgufTestFiles.bytes(p);
    }

    private static void assertError(byte[] b, String fragment) {
        EdgeLmException e = parse(b, fragment);
        assertTrue(e != null, "expected an error about " + fragment);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }

    /** One-tensor file; the tensor info fields sit at fixed offsets: name "t" at 24..33. */
    private static byte[] oneTensor(Path dir, GgmlType type, long cols, long rows, Consumer<ByteBuffer> corrupt) {
        long bytes = type.byteSize(cols * rows);
        byte[] b = smallFile(new LinkedHashMap<>(), List.of(new GgufTestFiles.Tensor(
                new GgufWriter.TensorSpec("t", new long[] {cols, rows}, type), new byte[(int) bytes])), dir);
        corrupt.accept(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN));
        return b;
    }

    @Test
    void specificCorruptionsAreNamed(@TempDir Path dir) {
        // layout: 24-byte preamble, name len @24, 't' @32, n_dims @33, ne0 @37, ne1 @45, type @53, offset @57
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putInt(0, 0x12345678)), "not a GGUF file");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putInt(4, 1)), "unsupported GGUF version 1");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(8, 1L << 40)), "tensor count");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(16, 1L << 40)), "metadata count");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(24, 1L << 50)), "string length");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putInt(33, 5)), "5 dimensions");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(37, 1L << 62).putLong(45, 1L << 62)), "overflow");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putInt(53, 999)), "unknown ggml type id 999");
        assertError(oneTensor(dir, GgmlType.Q8_0, 32, 2, b -> b.putLong(37, 48)), "not a multiple of the Q8_0 block size");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(57, 8)), "alignment");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(57, 1L << 40)), "past the end");
        assertError(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putLong(45, 1000)), "past the end");
    }

    @Test
    void duplicateNamesAndOverlapsAreRejected(@TempDir Path dir) {
        List<GgufTestFiles.Tensor> two = List.of(
                new GgufTestFiles.Tensor(new GgufWriter.TensorSpec("aa", new long[] {8}, GgmlType.F32), new byte[32]),
                new GgufTestFiles.Tensor(new GgufWriter.TensorSpec("ab", new long[] {8}, GgmlType.F32), new byte[32]));
        byte[] b = smallFile(new LinkedHashMap<>(), two, dir);
        // second name "ab" -> "aa": its info starts at 24 + (8 + 2 + 4 + 8 + 4 + 8) = 58, name bytes at 66
        byte[] dup = b.clone();
        dup[67] = 'a';
        assertError(dup, "tensor aa appears twice");
        byte[] overlap = b.clone();
        ByteBuffer.wrap(overlap).order(ByteOrder.LITTLE_ENDIAN).putLong(66 + 2 + 4 + 8 + 4, 0); // offset of "ab" -> 0
        assertError(overlap, "overlap");
    }

    @Test
    void badAlignmentIsRejected(@TempDir Path dir) {
        Map<String, GgufValue> meta = new LinkedHashMap<>();
        meta.put(GgufFile.ALIGNMENT_KEY, GgufValue.u32(64));
        byte[] b = smallFile(meta, List.of(), dir);
        // key len @24, key @32 (17 bytes), type @49, value @53
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(53, 48);
        assertError(b, "not a power of two");
    }

    @Test
    void deepNestingIsBounded() {
        GgufValue v = GgufValue.i32Array(new int[] {1});
        for (int i = 0; i < 12; i++) {
            v = GgufValue.nestedArray(new GgufValue[] {v});
        }
        Map<String, GgufValue> meta = Map.of("deep", v);
        byte[] header = GgufWriter.encodeHeader(meta, List.of());
        assertError(header, "nested deeper");
        assertEquals(0, GgufWriter.layout(List.of(), 32).size());
    }

    @Test
    void unknownTensorTypeIsReportedByTheReaderNotAsACrash(@TempDir Path dir) {
        EdgeLmException e = assertThrows(EdgeLmException.class,
                () -> GgufFile.read(MemorySegment.ofArray(oneTensor(dir, GgmlType.F32, 4, 2, b -> b.putInt(53, 63))), "x"));
        assertTrue(e.getMessage().contains("tensor t"), e.getMessage());
    }
}
