package dev.edgelm.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.convert.Qwen35Tensors;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.util.EdgeLmException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The released shapes, against the published configurations and the 0.8B's tensor shapes. */
class SynthShapeTest {

    private static Map<String, long[]> dims(Qwen35Config c) {
        Map<String, long[]> out = new HashMap<>();
        for (Qwen35Tensors.Entry e : Qwen35Tensors.of(c)) {
            out.put(e.name(), e.dims());
        }
        return out;
    }

    @Test
    void releasedConfigurations() {
        // size: hidden, MLP, layers, heads, KV heads, linear key heads, linear value heads
        int[][] published = {{1024, 3584, 24, 8, 2, 16, 16}, {2048, 6144, 24, 8, 2, 16, 16}, {2560, 9216, 32, 16, 4, 16, 32}};
        String[] sizes = {"0.8b", "2b", "4b"};
        for (int i = 0; i < sizes.length; i++) {
            Qwen35Config c = SynthShape.released(sizes[i]).config();
            int[] p = published[i];
            assertArrayEquals(p, new int[] {c.hiddenSize(), c.intermediateSize(), c.numLayers(), c.numHeads(), c.numKvHeads(),
                    c.linearKeyHeads(), c.linearValueHeads()}, sizes[i]);
            assertEquals(256, c.headDim());
            assertEquals(64, c.rotaryDim());
            assertArrayEquals(new int[] {11, 11, 10}, c.mropeSection());
            assertEquals(1e7, c.ropeTheta());
            assertEquals(128, c.linearKeyDim());
            assertEquals(128, c.linearValueDim());
            assertEquals(4, c.convKernel());
            assertEquals(248_320, c.vocabSize());
            assertTrue(c.tiedEmbeddings());
            assertTrue(c.valueHeadsTiled());
            assertEquals(1e-6f, c.rmsNormEps());
            for (int layer = 0; layer < c.numLayers(); layer++) {
                assertEquals((layer + 1) % 4 == 0, c.fullAttention()[layer]);
            }
        }
    }

    @Test
    void the08bTensorsHaveThePublishedShapes() {
        Qwen35Config c = SynthShape.released("0.8B").config();
        Map<String, long[]> d = dims(c);
        // Hugging Face [rows, cols] shapes of the 0.8B, as GGUF dims [cols, rows]
        assertArrayEquals(new long[] {1024, 248_320}, d.get("token_embd.weight"));
        assertArrayEquals(new long[] {1024, 6144}, d.get("blk.0.attn_qkv.weight"));
        assertArrayEquals(new long[] {1024, 2048}, d.get("blk.0.attn_gate.weight"));
        assertArrayEquals(new long[] {1024, 16}, d.get("blk.0.ssm_alpha.weight"));
        assertArrayEquals(new long[] {4, 6144}, d.get("blk.0.ssm_conv1d.weight"));
        assertArrayEquals(new long[] {16}, d.get("blk.0.ssm_a"));
        assertArrayEquals(new long[] {128}, d.get("blk.0.ssm_norm.weight"));
        assertArrayEquals(new long[] {2048, 1024}, d.get("blk.0.ssm_out.weight"));
        assertArrayEquals(new long[] {1024, 4096}, d.get("blk.3.attn_q.weight"));
        assertArrayEquals(new long[] {1024, 512}, d.get("blk.3.attn_k.weight"));
        assertArrayEquals(new long[] {2048, 1024}, d.get("blk.3.attn_output.weight"));
        assertArrayEquals(new long[] {256}, d.get("blk.3.attn_k_norm.weight"));
        assertArrayEquals(new long[] {1024, 3584}, d.get("blk.23.ffn_up.weight"));
        assertArrayEquals(new long[] {3584, 1024}, d.get("blk.23.ffn_down.weight"));
        long params = d.values().stream().mapToLong(x -> Arrays.stream(x).reduce(1, (a, b) -> a * b)).sum();
        assertEquals(0.752e9, params, 0.0005e9, "published: 0.752 B text parameters");
    }

    @Test
    void the4bHas32ValueHeadsOn16KeyHeads() {
        Map<String, long[]> d = dims(SynthShape.released("4b").config());
        assertArrayEquals(new long[] {2560, 2 * 16 * 128 + 32 * 128}, d.get("blk.0.attn_qkv.weight"));
        assertArrayEquals(new long[] {2560, 32 * 128}, d.get("blk.0.attn_gate.weight"));
        assertArrayEquals(new long[] {32}, d.get("blk.0.ssm_a"));
        assertArrayEquals(new long[] {4, 8192}, d.get("blk.0.ssm_conv1d.weight"));
        assertArrayEquals(new long[] {4096, 2560}, d.get("blk.0.ssm_out.weight"));
    }

    @Test
    void anUnknownSizeIsAClearError() {
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> SynthShape.released("9b"));
        assertEquals("--size: '9b' is not one of 0.8b, 2b, 4b", e.getMessage());
    }
}
