package dev.edgelm.format.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.Fixtures;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every way a safetensors file can lie is an EdgeLmException naming the file and the tensor. */
class SafetensorsValidationTest {
    @TempDir
    Path dir;

    private Path write(String header, int dataBytes) throws IOException {
        return write(header, new byte[dataBytes]);
    }

    private Path write(String header, byte[] data) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h).put(data);
        Path p = dir.resolve("model.safetensors");
        Files.write(p, b.array());
        return p;
    }

    private String error(Path p) {
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> SafetensorsFile.open(p).close());
        assertTrue(e.getMessage().startsWith(p.toString()), "message names the file: " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void readsAWellFormedFile() throws IOException {
        float[] values = {1.5f, -2f, 0.25f, 3f, 4f, 5f};
        ByteBuffer data = ByteBuffer.allocate(24 + 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            data.putFloat(v);
        }
        data.putShort((short) 0x3FC0).putShort((short) 0xC000); // bf16 1.5, -2
        Path p = write("{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[24,28]}}", data.array());
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            TensorView a = f.tensors().get("a");
            assertArrayEquals(new long[] {2, 3}, a.shape());
            assertArrayEquals(values, a.toFloatArray());
            assertEquals(3, a.asMatrix().cols());
            assertArrayEquals(new float[] {1.5f, -2f}, f.tensors().get("b").toFloatArray());
        }
    }

    @Test
    void fileShorterThanTheLengthField() throws IOException {
        Path p = dir.resolve("model.safetensors");
        Files.write(p, new byte[5]);
        assertTrue(error(p).contains("shorter than the 8-byte header length"));
    }

    @Test
    void headerLengthPastTheEndOfTheFile() throws IOException {
        Path p = dir.resolve("model.safetensors");
        ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN).putLong(1_000_000);
        Files.write(p, b.array());
        assertTrue(error(p).contains("runs past the end of the file"));
    }

    @Test
    void malformedJson() throws IOException {
        assertTrue(error(write("{\"a\": {\"dtype\": ", 0)).contains("malformed JSON header"));
        assertTrue(error(write("[1, 2, 3]", 0)).contains("not a JSON object"));
    }

    @Test
    void offsetsOutOfBounds() throws IOException {
        String m = error(write("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8));
        assertTrue(m.contains("tensor w") && m.contains("out of bounds"), m);
        m = error(write("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8));
        assertTrue(m.contains("tensor w") && m.contains("out of bounds"), m);
    }

    @Test
    void sizeNotMatchingDtypeTimesShape() throws IOException {
        String m = error(write("{\"w\":{\"dtype\":\"BF16\",\"shape\":[3,2],\"data_offsets\":[0,16]}}", 16));
        assertTrue(m.contains("tensor w") && m.contains("holds 16 bytes") && m.contains("needs 12"), m);
    }

    @Test
    void overlappingTensors() throws IOException {
        String m = error(write("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16));
        assertTrue(m.contains("overlap") && m.contains("a") && m.contains("b"), m);
    }

    @Test
    void missingFieldsAndUnknownDtype() throws IOException {
        assertTrue(error(write("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4)).contains("'dtype'"));
        assertTrue(error(write("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4)).contains("'shape'"));
        assertTrue(error(write("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4)).contains("'data_offsets'"));
        assertTrue(error(write("{\"w\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4)).contains("unknown dtype 'Q9'"));
    }

    @Test
    void aDtypeThatCannotBeComputedWithIsNamedWhenUsed() throws IOException {
        Path p = write("{\"w\":{\"dtype\":\"I64\",\"shape\":[2,1],\"data_offsets\":[0,16]}}", 16);
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> f.tensors().get("w").asMatrix());
            assertTrue(e.getMessage().contains("tensor w has dtype I64"), e.getMessage());
        }
    }

    @Test
    void aTruncatedRealCheckpointIsRejected() throws IOException {
        byte[] real = Files.readAllBytes(Fixtures.path("qwen35/tiny-a/model.safetensors"));
        Path p = dir.resolve("model.safetensors");
        Files.write(p, Arrays.copyOf(real, real.length - 1000));
        String m = error(p);
        assertTrue(m.contains("out of bounds"), m);
    }

    @Test
    void shardedCheckpointsResolveThroughTheIndex() throws IOException {
        ByteBuffer d = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putFloat(1f).putFloat(2f);
        Path one = write("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d.array());
        Files.move(one, dir.resolve("model-00001-of-00002.safetensors"));
        Path two = write("{\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", new byte[4]);
        Files.move(two, dir.resolve("model-00002-of-00002.safetensors"));
        Files.writeString(dir.resolve("model.safetensors.index.json"), "{\"metadata\":{},\"weight_map\":{"
                + "\"x\":\"model-00001-of-00002.safetensors\",\"y\":\"model-00002-of-00002.safetensors\"}}");
        try (SafetensorsCheckpoint c = SafetensorsCheckpoint.open(dir)) {
            assertEquals(2, c.tensors().size());
            assertArrayEquals(new float[] {1f, 2f}, c.tensors().get("x").toFloatArray());
        }
        Files.writeString(dir.resolve("model.safetensors.index.json"), "{\"weight_map\":{"
                + "\"x\":\"model-00002-of-00002.safetensors\"}}");
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("tensor x is listed in shard"), e.getMessage());
        Files.writeString(dir.resolve("model.safetensors.index.json"), "{\"weight_map\":{\"x\":\"missing.safetensors\"}}");
        e = assertThrows(EdgeLmException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("shard 'missing.safetensors'"), e.getMessage());
    }
}
