package dev.edgelm.format.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufTensorTypesTest {
    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");

    /** Every shipped llama.cpp file's tensor types, against the types its manifest lists (written by gguf-py). */
    @Test
    void typesAreTheManifests() throws IOException {
        JsonNode manifest = new ObjectMapper().readTree(MINI.resolve("manifest.json").toFile());
        int files = 0;
        for (JsonNode f : manifest.get("files")) {
            if (!f.hasNonNull("file") || !Files.exists(MINI.resolve(f.get("file").asText()))) { // the subset in this repository
                continue;
            }
            Map<String, String> expected = new LinkedHashMap<>();
            f.get("tensor_types").properties().forEach(e -> expected.put(e.getKey(), e.getValue().asText()));
            Map<String, String> read = new LinkedHashMap<>();
            GgufTensorTypes.read(MINI.resolve(f.get("file").asText())).forEach((k, v) -> read.put(k, v.name()));
            assertEquals(expected, read, f.get("file").asText());
            files++;
        }
        assertEquals(7, files);
    }

    @Test
    void aCutHeaderIsAnErrorNamingTheFile(@TempDir Path dir) throws IOException {
        byte[] whole = Files.readAllBytes(MINI.resolve("qwen35-mini-Q4_0.gguf"));
        for (int cut : new int[] {0, 3, 20, 1000, 4000}) {
            Path p = dir.resolve("cut-" + cut + ".gguf");
            Files.write(p, Arrays.copyOf(whole, cut));
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> GgufTensorTypes.read(p), "cut at " + cut);
            assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
        }
    }

    /** A lying count (2^62 metadata entries) is refused at once, not looped over. */
    @Test
    void aLyingCountIsRefused(@TempDir Path dir) throws IOException {
        byte[] whole = Files.readAllBytes(MINI.resolve("qwen35-mini-Q4_0.gguf"));
        whole[16 + 7] = 0x40; // the metadata count's top byte
        Path p = dir.resolve("lying.gguf");
        Files.write(p, whole);
        assertThrows(EdgeLmException.class, () -> GgufTensorTypes.read(p));
        assertEquals(GgmlType.Q4_0, GgufTensorTypes.read(MINI.resolve("qwen35-mini-Q4_0.gguf")).get("blk.0.ffn_up.weight"));
    }

    /**
     * Metadata of every value type, nested arrays among them (three levels), is stepped over: the types are those
     * the full reader finds in the same file.
     */
    @Test
    void everyValueTypeIsSkipped(@TempDir Path dir) {
        Path p = dir.resolve("every-type.gguf");
        GgufTestFiles.write(p, GgufTestFiles.everyType(), GgufTestFiles.someTensors());
        Map<String, GgmlType> expected = new LinkedHashMap<>();
        expected.put("a.weight", GgmlType.F32);
        expected.put("b.weight", GgmlType.BF16);
        expected.put("c.norm", GgmlType.F32);
        assertEquals(expected, GgufTensorTypes.read(p));
        try (GgufFile full = GgufFile.open(p)) {
            full.tensorInfos().forEach((name, info) -> assertEquals(info.type(), expected.get(name), name));
        }
    }

    /** Arrays nested deeper than the full reader allows are refused too, not recursed into without end. */
    @Test
    void deepNestingIsRefused(@TempDir Path dir) {
        GgufValue v = GgufValue.i32Array(new int[] {1});
        for (int i = 0; i < 9; i++) {
            v = GgufValue.nestedArray(new GgufValue[] {v});
        }
        Map<String, GgufValue> m = new LinkedHashMap<>();
        m.put("general.architecture", GgufValue.string("test"));
        m.put("t.deep", v);
        Path p = dir.resolve("deep.gguf");
        GgufTestFiles.write(p, m, GgufTestFiles.someTensors());
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> GgufTensorTypes.read(p));
        assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
    }
}
