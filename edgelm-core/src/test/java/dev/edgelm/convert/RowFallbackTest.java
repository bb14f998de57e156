package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.model.HuggingFaceLoader;
import dev.edgelm.model.Logit;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A checkpoint whose MLP width (80) is not a multiple of 32: ffn_down falls back to BF16 with a warning. */
class RowFallbackTest {
    @TempDir
    Path dir;

    /** Writes a random float32 checkpoint (values exactly representable in bfloat16) with 2 layers [linear, full]. */
    private Path checkpoint() throws IOException {
        Path ckpt = dir.resolve("odd");
        Files.createDirectories(ckpt);
        Files.writeString(ckpt.resolve("config.json"), """
                {"model_type": "qwen3_5_text", "hidden_size": 64, "num_hidden_layers": 2,
                 "layer_types": ["linear_attention", "full_attention"], "num_attention_heads": 2,
                 "num_key_value_heads": 1, "head_dim": 32, "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                 "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 32,
                 "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "intermediate_size": 80,
                 "vocab_size": 64, "rms_norm_eps": 1e-6, "tie_word_embeddings": true,
                 "max_position_embeddings": 4096}""");
        Map<String, long[]> shapes = new LinkedHashMap<>();
        shapes.put("model.embed_tokens.weight", new long[] {64, 64});
        shapes.put("model.norm.weight", new long[] {64});
        for (int i = 0; i < 2; i++) {
            String p = "model.layers." + i + ".";
            shapes.put(p + "input_layernorm.weight", new long[] {64});
            shapes.put(p + "post_attention_layernorm.weight", new long[] {64});
            shapes.put(p + "mlp.gate_proj.weight", new long[] {80, 64});
            shapes.put(p + "mlp.up_proj.weight", new long[] {80, 64});
            shapes.put(p + "mlp.down_proj.weight", new long[] {64, 80});
        }
        String l = "model.layers.0.linear_attn.";
        shapes.put(l + "in_proj_qkv.weight", new long[] {128, 64});
        shapes.put(l + "in_proj_z.weight", new long[] {64, 64});
        shapes.put(l + "in_proj_a.weight", new long[] {2, 64});
        shapes.put(l + "in_proj_b.weight", new long[] {2, 64});
        shapes.put(l + "conv1d.weight", new long[] {128, 1, 4});
        shapes.put(l + "A_log", new long[] {2});
        shapes.put(l + "dt_bias", new long[] {2});
        shapes.put(l + "norm.weight", new long[] {32});
        shapes.put(l + "out_proj.weight", new long[] {64, 64});
        String a = "model.layers.1.self_attn.";
        shapes.put(a + "q_proj.weight", new long[] {128, 64});
        shapes.put(a + "k_proj.weight", new long[] {32, 64});
        shapes.put(a + "v_proj.weight", new long[] {32, 64});
        shapes.put(a + "q_norm.weight", new long[] {32});
        shapes.put(a + "k_norm.weight", new long[] {32});
        shapes.put(a + "o_proj.weight", new long[] {64, 64});

        Random rnd = new Random(11);
        StringBuilder header = new StringBuilder("{");
        List<float[]> data = new ArrayList<>();
        long offset = 0;
        for (Map.Entry<String, long[]> e : shapes.entrySet()) {
            long n = 1;
            for (long d : e.getValue()) {
                n *= d;
            }
            float scale = e.getKey().contains("embed") ? 0.5f : e.getValue().length == 1 ? 0.05f : 0.15f;
            float[] v = new float[(int) n];
            for (int i = 0; i < v.length; i++) {
                float x = (float) rnd.nextGaussian() * scale;
                v[i] = Float.intBitsToFloat(Float.floatToRawIntBits(x) & 0xffff0000); // exactly a bfloat16
            }
            data.add(v);
            header.append(header.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":{\"dtype\":\"F32\",\"shape\":")
                    .append(java.util.Arrays.toString(e.getValue())).append(",\"data_offsets\":[").append(offset)
                    .append(',').append(offset + 4 * n).append("]}");
            offset += 4 * n;
        }
        header.append('}');
        while ((header.length() + 8) % 8 != 0) {
            header.append(' ');
        }
        byte[] h = header.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.allocate((int) (8 + h.length + offset)).order(ByteOrder.LITTLE_ENDIAN);
        buf.putLong(h.length).put(h);
        for (float[] v : data) {
            for (float x : v) {
                buf.putFloat(x);
            }
        }
        Files.write(ckpt.resolve("model.safetensors"), buf.array());
        return ckpt;
    }

    @Test
    void rowsThatAreNotWholeBlocksFallBackToBf16() throws IOException {
        Path ckpt = checkpoint();
        List<String> warnings = new ArrayList<>();
        Path int8 = dir.resolve("odd-int8.gguf");
        GgufConverter.convert(ckpt, int8, QuantRecipe.INT8, warnings::add, null);
        assertTrue(warnings.stream().anyMatch(w -> w.startsWith("blk.0.ffn_down.weight: row length 80") && w.endsWith("stored as BF16")),
                warnings.toString());
        try (GgufFile g = GgufFile.open(int8)) {
            assertEquals(GgmlType.BF16, g.tensor("blk.0.ffn_down.weight").type());
            assertEquals(GgmlType.BF16, g.tensor("blk.1.ffn_down.weight").type());
            assertEquals(GgmlType.Q8_0, g.tensor("blk.0.ffn_up.weight").type());
            assertEquals(GgmlType.Q8_0, g.tensor("token_embd.weight").type());
        }
        // bf16: every weight is exactly representable, so the GGUF model computes what the checkpoint does
        Path bf16 = dir.resolve("odd-bf16.gguf");
        GgufConverter.convert(ckpt, bf16, QuantRecipe.BF16, w -> { }, null);
        int[] ids = {1, 5, 9, 13, 2, 60, 33, 7, 7, 41};
        float[] expected;
        try (Qwen35Model m = HuggingFaceLoader.load(ckpt, 2)) {
            expected = m.forward(m.newState(ids.length), ids, 0, ids.length, Qwen35Model.Logits.ALL);
        }
        float[] got = ConverterParityTest.logits(bf16, ids);
        assertTrue(Logit.maxAbsDiff(expected, got) < 1e-4, "max abs " + Logit.maxAbsDiff(expected, got));
    }
}
