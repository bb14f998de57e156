package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufValue;
import dev.edgelm.format.gguf.GgufWriter;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

/** Hostile variants of the test models, made by hand: lying metadata, poisoned numbers, NaN weights. */
final class HostileModels {
    static final Path MINI_BF16 = Path.of("src/test/resources/fixtures/gguf/mini/qwen35-mini-BF16.gguf");
    static final Path TINY_A = Path.of("src/test/resources/fixtures/qwen35/tiny-a");
    static final Path TINY_CHAT = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");

    private HostileModels() {}

    /** The mini GGUF with metadata entries replaced (a null value removes the key); the tensors as they are. */
    static Path gguf(Path dir, String name, Map<String, GgufValue> overrides) {
        return gguf(dir, name, overrides, Map.of());
    }

    /** As {@link #gguf(Path, String, Map)}, with some tensors' dims replaced (their data then empty). */
    static Path gguf(Path dir, String name, Map<String, GgufValue> overrides, Map<String, long[]> dims) {
        Path out = dir.resolve(name);
        try (GgufFile src = GgufFile.open(MINI_BF16)) {
            Map<String, GgufValue> meta = new LinkedHashMap<>(src.metadata().asMap());
            overrides.forEach((k, v) -> {
                if (v == null) {
                    meta.remove(k);
                } else {
                    meta.put(k, v);
                }
            });
            List<GgufWriter.TensorSpec> specs = new ArrayList<>();
            for (GgufTensorInfo t : src.tensorInfos().values()) {
                specs.add(new GgufWriter.TensorSpec(t.name(), dims.getOrDefault(t.name(), t.dims()), t.type()));
            }
            try (GgufWriter w = GgufWriter.create(out, meta, specs)) {
                for (GgufTensor t : src.tensors()) {
                    if (!dims.containsKey(t.info().name())) {
                        byte[] b = t.data().toArray(ValueLayout.JAVA_BYTE);
                        w.write(b, 0, b.length);
                    } else {
                        long n = 1;
                        for (long d : dims.get(t.info().name())) {
                            n *= d;
                        }
                        byte[] b = new byte[(int) t.info().type().byteSize(n)];
                        w.write(b, 0, b.length);
                    }
                }
                w.finish();
            }
        }
        return out;
    }

    /** A copy of a checkpoint folder with its config.json's text_config edited. */
    static Path checkpoint(Path dir, Path from, String name, Consumer<ObjectNode> editTextConfig) {
        Path out = copy(dir, from, name);
        try {
            ObjectMapper json = new ObjectMapper();
            ObjectNode root = (ObjectNode) json.readTree(out.resolve("config.json").toFile());
            editTextConfig.accept((ObjectNode) root.get("text_config"));
            Files.writeString(out.resolve("config.json"), json.writeValueAsString(root));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    /** A copy of a checkpoint folder (files only). */
    static Path copy(Path dir, Path from, String name) {
        Path out = dir.resolve(name);
        try {
            Files.createDirectories(out);
            try (Stream<Path> files = Files.list(from)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    Files.copy(f, out.resolve(f.getFileName()));
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    /** Overwrites every element of a BF16 tensor of a safetensors file with NaN (0x7fc0). */
    static void poisonBf16(Path safetensors, String tensor) {
        try {
            byte[] b = Files.readAllBytes(safetensors);
            long n = ByteBuffer.wrap(b, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            ObjectNode header = (ObjectNode) new ObjectMapper().readTree(new String(b, 8, (int) n, StandardCharsets.UTF_8));
            int start = 8 + (int) n + header.get(tensor).get("data_offsets").get(0).asInt();
            int end = 8 + (int) n + header.get(tensor).get("data_offsets").get(1).asInt();
            for (int i = start; i < end; i += 2) {
                b[i] = (byte) 0xc0;
                b[i + 1] = 0x7f;
            }
            Files.write(safetensors, b);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
