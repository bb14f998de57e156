package dev.edgelm.format.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufRoundTripTest {
    private static final Path MINI_BF16 = Path.of("src/test/resources/fixtures/gguf/mini/qwen35-mini-BF16.gguf");

    @TempDir
    Path dir;

    @Test
    void everyMetadataTypeAndTensorSurvivesARoundTrip() {
        Path file = dir.resolve("a.gguf");
        Map<String, GgufValue> meta = GgufTestFiles.everyType();
        List<GgufTestFiles.Tensor> tensors = GgufTestFiles.someTensors();
        GgufTestFiles.write(file, meta, tensors);
        try (GgufFile g = GgufFile.open(file)) {
            assertEquals(3, g.version());
            assertEquals(meta, g.metadata().asMap());
            assertEquals(List.copyOf(meta.keySet()), List.copyOf(g.metadata().asMap().keySet()), "order kept");
            assertEquals(List.of("a.weight", "b.weight", "c.norm"), List.copyOf(g.tensorInfos().keySet()));
            for (GgufTestFiles.Tensor t : tensors) {
                GgufTensor read = g.tensor(t.spec().name());
                assertEquals(t.spec().type(), read.type());
                assertArrayEquals(t.spec().dims(), read.info().dims());
                assertArrayEquals(t.data(), read.data().toArray(ValueLayout.JAVA_BYTE));
                assertEquals(0, (g.dataOffset() + read.info().offset()) % 32, "aligned");
            }
            assertEquals("18446744073709551615", g.metadata().asMap().get("t.u64").toString());
            assertEquals(-128, g.metadata().requireLong("t.i8"));
            assertEquals(4_000_000_000L, g.metadata().requireLong("t.u32"));
        }
    }

    @Test
    void headerBytesFollowTheSpecification() throws IOException {
        Map<String, GgufValue> meta = new LinkedHashMap<>();
        meta.put("k", GgufValue.u16(0x1234));
        Path file = dir.resolve("small.gguf");
        GgufTestFiles.write(file, meta, List.of(new GgufTestFiles.Tensor(
                new GgufWriter.TensorSpec("t", new long[] {2}, GgmlType.F32), new byte[8])));
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        // hand-derived from the GGUF specification
        assertEquals('G', b.get(0));
        assertEquals('F', b.get(3));
        assertEquals(3, b.getInt(4));
        assertEquals(1, b.getLong(8), "tensor count");
        assertEquals(1, b.getLong(16), "kv count");
        assertEquals(1, b.getLong(24), "key length");
        assertEquals('k', b.get(32));
        assertEquals(2, b.getInt(33), "type u16");
        assertEquals(0x1234, b.getShort(37));
        assertEquals(1, b.getLong(39), "name length");
        assertEquals('t', b.get(47));
        assertEquals(1, b.getInt(48), "n_dims");
        assertEquals(2, b.getLong(52), "ne[0]");
        assertEquals(0, b.getInt(60), "F32");
        assertEquals(0, b.getLong(64), "offset");
        assertEquals(96 + 32, b.capacity(), "header 72 bytes padded to 96, then 8 bytes padded to 32");
    }

    @Test
    void rewritingGivesIdenticalBytes() {
        Path first = dir.resolve("first.gguf");
        Map<String, GgufValue> meta = GgufTestFiles.everyType();
        meta.put(GgufFile.ALIGNMENT_KEY, GgufValue.u32(64));
        GgufTestFiles.write(first, meta, GgufTestFiles.someTensors());
        Path second = dir.resolve("second.gguf");
        try (GgufFile g = GgufFile.open(first)) {
            assertEquals(64, g.alignment());
            assertEquals(0, g.dataOffset() % 64);
            GgufTestFiles.rewrite(g, second);
        }
        assertArrayEquals(GgufTestFiles.bytes(first), GgufTestFiles.bytes(second));
    }

    @Test
    void rewritingALlamaCppFileReproducesItByteForByte() {
        Path copy = dir.resolve("copy.gguf");
        try (GgufFile g = GgufFile.open(MINI_BF16)) {
            assertEquals("qwen35", g.metadata().requireString("general.architecture"));
            assertEquals(56, g.tensorInfos().size());
            assertArrayEquals(new long[] {4, 1024}, g.tensorInfos().get("blk.0.ssm_conv1d.weight").dims());
            GgufTestFiles.rewrite(g, copy);
        }
        assertArrayEquals(GgufTestFiles.bytes(MINI_BF16), GgufTestFiles.bytes(copy));
    }

    @Test
    void anUnfinishedWriteLeavesNoFile() throws IOException {
        Path target = dir.resolve("out.gguf");
        List<GgufTestFiles.Tensor> tensors = GgufTestFiles.someTensors();
        try (GgufWriter w = GgufWriter.create(target, Map.of(), tensors.stream().map(GgufTestFiles.Tensor::spec).toList())) {
            w.write(tensors.get(0).data(), 0, 24);
            assertThrows(IllegalStateException.class, w::finish);
        }
        assertFalse(Files.exists(target));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(0, files.count(), "temporary file removed");
        }
    }

    @Test
    void aTensorOfATypeWithoutAKernelIsNamedWithItsFile() {
        Path file = dir.resolve("iq.gguf");
        GgufTestFiles.write(file, Map.of(), List.of(new GgufTestFiles.Tensor(
                new GgufWriter.TensorSpec("blk.0.ffn_up.weight", new long[] {256, 1}, GgmlType.IQ2_XS), new byte[74])));
        try (GgufFile g = GgufFile.open(file)) {
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> g.tensor("blk.0.ffn_up.weight").asMatrix());
            assertTrue(e.getMessage().startsWith(file + ": tensor blk.0.ffn_up.weight has type IQ2_XS, which EdgeLM cannot "
                    + "compute with (supported: F32, F16, Q4_0"), e.getMessage());
        }
    }

    @Test
    void writerRejectsRowsThatAreNotWholeBlocks() {
        assertThrows(IllegalArgumentException.class, () -> GgufWriter.create(dir.resolve("x.gguf"), Map.of(),
                List.of(new GgufWriter.TensorSpec("q", new long[] {48, 2}, GgmlType.Q8_0))));
    }

    @Test
    void typedLookupsNameTheKey() {
        GgufMetadata m = new GgufMetadata(GgufTestFiles.everyType(), "f.gguf");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> m.requireString("t.u8"));
        assertTrue(e.getMessage().contains("f.gguf") && e.getMessage().contains("t.u8") && e.getMessage().contains("u8"), e.getMessage());
        e = assertThrows(EdgeLmException.class, () -> m.requireLong("missing.key"));
        assertTrue(e.getMessage().contains("missing.key"), e.getMessage());
        e = assertThrows(EdgeLmException.class, () -> m.requireLong("t.u64"));
        assertTrue(e.getMessage().contains("too large"), e.getMessage());
        assertArrayEquals(new int[] {1, -2, 3}, m.optIntArray("t.arr_i32").orElseThrow());
    }
}
