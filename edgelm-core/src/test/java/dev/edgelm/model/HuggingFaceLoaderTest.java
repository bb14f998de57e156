package dev.edgelm.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.Fixtures;
import dev.edgelm.format.safetensors.SafetensorsFile;
import dev.edgelm.tensor.TensorView;
import dev.edgelm.util.EdgeLmException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Checkpoint folders: sharding, foreign tensors, and the errors for missing or misshapen tensors and configs. */
class HuggingFaceLoaderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** Writes the tensors of tiny-a that pass {@code keep} (plus {@code extra}) as a safetensors file. */
    private static void writeSafetensors(Path file, Map<String, TensorView> tensors, Predicate<String> keep,
            Map<String, TensorView> extra) throws IOException {
        Map<String, TensorView> chosen = new LinkedHashMap<>();
        tensors.forEach((k, v) -> {
            if (keep.test(k)) {
                chosen.put(k, v);
            }
        });
        chosen.putAll(extra);
        ObjectNode header = JSON.createObjectNode();
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        for (Map.Entry<String, TensorView> e : chosen.entrySet()) {
            TensorView t = e.getValue();
            ObjectNode info = header.putObject(e.getKey());
            info.put("dtype", t.dtype());
            info.putPOJO("shape", t.shape());
            long begin = data.size();
            data.write(t.data().toArray(ValueLayout.JAVA_BYTE));
            info.putPOJO("data_offsets", new long[] {begin, data.size()});
        }
        byte[] h = JSON.writeValueAsBytes(header);
        ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(len.array());
        out.write(h);
        out.write(data.toByteArray());
        Files.write(file, out.toByteArray());
    }

    private Path folderWith(Predicate<String> keep, Map<String, TensorView> extra, SafetensorsFile src) throws IOException {
        Path folder = Files.createDirectories(dir.resolve("ckpt"));
        Files.copy(Fixtures.path("qwen35/tiny-a/config.json"), folder.resolve("config.json"));
        writeSafetensors(folder.resolve("model.safetensors"), src.tensors(), keep, extra);
        return folder;
    }

    private static float[] logitsOf(Path folder, int[] ids) {
        try (Qwen35Model m = HuggingFaceLoader.load(folder, 1)) {
            return m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
        }
    }

    @Test
    void shardedCheckpointWithForeignTensorsGivesTheSameLogits() throws IOException {
        int[] ids = Fixtures.npy("qwen35/tiny-a/golden/prompt_ids.npy").toIntArray();
        Path folder = Files.createDirectories(dir.resolve("sharded"));
        Files.copy(Fixtures.path("qwen35/tiny-a/config.json"), folder.resolve("config.json"));
        try (SafetensorsFile src = SafetensorsFile.open(Fixtures.path("qwen35/tiny-a/model.safetensors"))) {
            Predicate<String> first = name -> name.contains("layers.0.") || name.contains("layers.1.") || name.contains("embed");
            TensorView someTensor = src.tensors().get("model.language_model.norm.weight");
            Map<String, TensorView> visual = Map.of("model.visual.blocks.0.norm1.weight", someTensor,
                    "mtp.norm.weight", someTensor);
            writeSafetensors(folder.resolve("model-00001-of-00002.safetensors"), src.tensors(), first, Map.of());
            writeSafetensors(folder.resolve("model-00002-of-00002.safetensors"), src.tensors(), first.negate(), visual);
            Map<String, String> weightMap = new LinkedHashMap<>();
            src.tensors().keySet().forEach(k -> weightMap.put(k, first.test(k)
                    ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors"));
            visual.keySet().forEach(k -> weightMap.put(k, "model-00002-of-00002.safetensors"));
            Files.writeString(folder.resolve("model.safetensors.index.json"),
                    JSON.writeValueAsString(Map.of("metadata", Map.of(), "weight_map", weightMap)));
        }
        assertFalse(Files.exists(folder.resolve("model.safetensors")));
        // same weights and arithmetic; the JIT tier may still change a vector reduction order or an exp by an ulp
        float diff = Fixtures.maxAbsDiff(logitsOf(Fixtures.path("qwen35/tiny-a"), ids), logitsOf(folder, ids), 0);
        assertTrue(diff <= 1e-4f, "max abs diff " + diff);
    }

    @Test
    void aMissingTensorIsNamed() throws IOException {
        try (SafetensorsFile src = SafetensorsFile.open(Fixtures.path("qwen35/tiny-a/model.safetensors"))) {
            Path folder = folderWith(name -> !name.equals("model.language_model.layers.2.linear_attn.A_log"), Map.of(), src);
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> HuggingFaceLoader.load(folder, 1));
            assertTrue(e.getMessage().contains("model.language_model.layers.2.linear_attn.A_log [2]") && e.getMessage().contains("missing"),
                    e.getMessage());
        }
    }

    @Test
    void aTensorOfTheWrongShapeIsNamed() throws IOException {
        try (SafetensorsFile src = SafetensorsFile.open(Fixtures.path("qwen35/tiny-a/model.safetensors"))) {
            String name = "model.language_model.layers.3.self_attn.k_proj.weight";
            TensorView wrong = src.tensors().get("model.language_model.layers.3.self_attn.q_proj.weight");
            Path folder = folderWith(n -> !n.equals(name), Map.of(name, wrong), src);
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> HuggingFaceLoader.load(folder, 1));
            assertTrue(e.getMessage().contains(name + " has shape [256, 128], expected [64, 128]"), e.getMessage());
        }
    }

    @Test
    void flatConfigWithAnAttentionIntervalReadsLikeTheNestedOne() throws IOException {
        Qwen35Config nested = Qwen35Config.load(Fixtures.path("qwen35/tiny-b/config.json"));
        ObjectNode root = (ObjectNode) JSON.readTree(Fixtures.path("qwen35/tiny-b/config.json").toFile());
        ObjectNode text = (ObjectNode) root.get("text_config");
        text.remove("layer_types");
        text.put("tie_word_embeddings", false);
        Path flat = dir.resolve("config.json");
        Files.writeString(flat, JSON.writeValueAsString(text));
        Qwen35Config c = Qwen35Config.load(flat);
        assertArrayEquals(nested.fullAttention(), c.fullAttention());
        assertArrayEquals(new boolean[] {false, false, false, true, false, false, false, true}, c.fullAttention());
        assertEquals(nested.toString(), c.toString());
        assertEquals(16, c.rotaryDim());
        assertEquals(1e7, c.ropeTheta());
        assertFalse(c.tiedEmbeddings());
        assertEquals(List.of(0, 0, 1, 1), List.of(c.keyHeadOfValueHead(0), c.keyHeadOfValueHead(1),
                c.keyHeadOfValueHead(2), c.keyHeadOfValueHead(3)));
    }

    @Test
    void configErrorsNameTheFieldAndFile() throws IOException {
        ObjectNode root = (ObjectNode) JSON.readTree(Fixtures.path("qwen35/tiny-a/config.json").toFile());
        Path p = dir.resolve("config.json");

        root.put("model_type", "llama");
        Files.writeString(p, JSON.writeValueAsString(root));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> Qwen35Config.load(p));
        assertTrue(e.getMessage().startsWith(p.toString()) && e.getMessage().contains("model_type 'llama'"), e.getMessage());

        root.put("model_type", "qwen3_5");
        ((ObjectNode) root.get("text_config")).remove("hidden_size");
        Files.writeString(p, JSON.writeValueAsString(root));
        e = assertThrows(EdgeLmException.class, () -> Qwen35Config.load(p));
        assertTrue(e.getMessage().contains("'hidden_size'"), e.getMessage());

        Files.writeString(p, "{\"model_type\": ");
        e = assertThrows(EdgeLmException.class, () -> Qwen35Config.load(p));
        assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
    }

    @Test
    void folderWithoutWeightsOrConfig() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> HuggingFaceLoader.load(empty, 1));
        assertTrue(e.getMessage().contains("no config.json"), e.getMessage());
        Files.copy(Fixtures.path("qwen35/tiny-a/config.json"), empty.resolve("config.json"));
        e = assertThrows(EdgeLmException.class, () -> HuggingFaceLoader.load(empty, 1));
        assertTrue(e.getMessage().contains("no model.safetensors"), e.getMessage());
        assertTrue(new String(Files.readAllBytes(empty.resolve("config.json")), StandardCharsets.UTF_8).contains("qwen3_5"));
    }
}
