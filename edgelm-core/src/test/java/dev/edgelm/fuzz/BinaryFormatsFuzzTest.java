package dev.edgelm.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.edgelm.format.gguf.GenerationDefaults;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.format.safetensors.SafetensorsCheckpoint;
import dev.edgelm.format.safetensors.SafetensorsFile;
import dev.edgelm.model.GgufLoader;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tensor.TensorView;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Fuzz targets for the binary model formats: GGUF (reader, then the Qwen3.5 loader and the tokenizer / template /
 * stop-token section), safetensors (a file's header, a sharded checkpoint's index) and NumPy {@code .npy}.
 *
 * <p>Without {@code JAZZER_FUZZ} each target replays its corpus under
 * {@code src/test/resources/dev/edgelm/fuzz/BinaryFormatsFuzzTestInputs/<target>/} as ordinary tests; with it,
 * one target is fuzzed (see {@code tools/fuzz/run.sh}).
 */
class BinaryFormatsFuzzTest {
    /** Tensors at most this big are read as floats, so every tensor of a seed is touched. */
    private static final long READ_ELEMENTS = 1 << 16;

    /** The corpus reaches the loader's end: its tiny model loads and its template renders a prompt. */
    @Test
    void theTinySeedIsAWholeModel() throws Exception {
        byte[] data = Files.readAllBytes(Path.of(BinaryFormatsFuzzTest.class.getResource(
                "BinaryFormatsFuzzTestInputs/ggufLoad/tiny-qwen35").toURI()));
        try (Arena arena = Arena.ofConfined()) {
            GgufFile file = GgufFile.read(copy(data, arena), "tiny-qwen35");
            Qwen35Config config = GgufLoader.config(file);
            assertEquals(2, config.numLayers());
            GgufLoader.weights(file, config);
            ChatFormat format = ChatFormat.read(file).orElseThrow();
            int[] ids = format.encodePrompt(List.of(Map.of("role", "user", "content", "the")), null, true, Map.of());
            // <|im_start|> "user" "\n" "the" <|im_end|> "\n" <|im_start|> "assistant" "\n": specials 258 and 259
            assertEquals(258, ids[0]);
            assertEquals(259, format.stopTokenIds()[0]);
        }
    }

    @FuzzTest
    void ggufRead(byte[] data) {
        Hostile.endsCleanly(() -> {
            try (Arena arena = Arena.ofConfined()) {
                GgufFile file = GgufFile.read(copy(data, arena), "fuzz.gguf");
                for (Map.Entry<String, GgufValue> e : file.metadata().asMap().entrySet()) {
                    e.getValue().describeType();
                }
                for (GgufTensor t : file.tensors()) {
                    t.info().toString();
                }
            }
        });
    }

    @FuzzTest
    void ggufLoad(byte[] data) {
        Hostile.endsCleanly(() -> {
            try (Arena arena = Arena.ofConfined()) {
                GgufFile file = GgufFile.read(copy(data, arena), "fuzz.gguf");
                GenerationDefaults.read(file.metadata()).describe();
                Optional<ChatFormat> format = ChatFormat.read(file);
                if (format.isPresent() && format.get().template() != null) {
                    format.get().encodePrompt(List.of(Map.of("role", "user", "content", "Hi <|im_end|>")), null, true, Map.of());
                }
                Qwen35Config config = GgufLoader.config(file);
                GgufLoader.weights(file, config);
            }
        });
    }

    @FuzzTest
    void safetensorsHeader(byte[] data) {
        Hostile.endsCleanly(() -> {
            try (SafetensorsFile f = SafetensorsFile.open(Hostile.write("one/model.safetensors", data))) {
                touch(f.tensors());
            }
        });
    }

    /**
     * A sharded checkpoint: a little-endian u16 length, that many bytes of {@code model.safetensors.index.json},
     * then the bytes of the one shard ({@code model-00001-of-00001.safetensors}) it may name.
     */
    @FuzzTest
    void checkpointIndex(byte[] data) {
        Hostile.endsCleanly(() -> {
            int n = data.length < 2 ? 0 : Math.min(data.length - 2, (data[0] & 0xff) | (data[1] & 0xff) << 8);
            int start = Math.min(2, data.length);
            Path folder = Hostile.scratch().resolve("sharded");
            Files.createDirectories(folder);
            Files.write(folder.resolve("model.safetensors.index.json"), Arrays.copyOfRange(data, start, start + n));
            Files.write(folder.resolve("model-00001-of-00001.safetensors"), Arrays.copyOfRange(data, start + n, data.length));
            try (SafetensorsCheckpoint c = SafetensorsCheckpoint.open(folder)) {
                touch(c.tensors());
            }
        });
    }

    @FuzzTest
    void npy(byte[] data) {
        Hostile.endsCleanly(() -> {
            Npy.Array a = Npy.read(Hostile.write("array.npy", data));
            if (a.longs() != null && a.shape().length == 1) {
                a.toIntArray();
            }
        });
    }

    private static void touch(Map<String, TensorView> tensors) {
        for (TensorView t : tensors.values()) {
            if (t.elementCount() <= READ_ELEMENTS) {
                t.toFloatArray();
            }
        }
    }

    /** The bytes in native memory aligned as a mapped file is, where the reader expects them. */
    private static MemorySegment copy(byte[] data, Arena arena) {
        MemorySegment seg = arena.allocate(Math.max(1, data.length), 64);
        MemorySegment.copy(MemorySegment.ofArray(data), 0, seg, 0, data.length);
        return seg.asSlice(0, data.length);
    }
}
