package dev.edgelm.convert;

import dev.edgelm.tensor.GgmlType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;

/**
 * The tensors of a vision projector (mmproj) file for a Qwen3.5 vision tower, named, shaped and ordered as
 * llama.cpp's converter writes them ({@code clip} architecture, projector {@code qwen3vl_merger}): the
 * checkpoint's {@code model.visual.*} tensors in sorted name order, renamed
 * ({@code blocks.N.norm1} to {@code v.blk.N.ln1}, {@code attn.qkv} to {@code attn_qkv}, {@code attn.proj} to
 * {@code attn_out}, {@code mlp.linear_fc1/2} to {@code ffn_up/down}, {@code merger.norm} to
 * {@code v.post_ln}, {@code merger.linear_fc1/2} to {@code mm.0/2}, {@code pos_embed} to
 * {@code v.position_embd}), values unchanged, the Conv3d patch kernel split into one kernel per frame
 * ({@code v.patch_embd.weight} and {@code v.patch_embd.weight.1}).
 */
public final class MmprojTensors {
    private MmprojTensors() {}

    /** How a tensor is stored (see {@link #typeOf}). */
    public enum Role { VECTOR, POSITION, PATCH, MATRIX, MERGER }

    /**
     * One tensor: its GGUF name, the checkpoint tensor it comes from, its role, ggml dims (row length first)
     * and, for a patch kernel, the frame it holds.
     */
    public record Entry(String name, String hfName, Role role, long[] dims, int frame) {
        public Entry {
            dims = dims.clone();
        }

        @Override
        public long[] dims() {
            return dims.clone();
        }

        /** Rows as written: the last dim (1 for a vector). */
        public int rows() {
            return dims.length == 1 ? 1 : (int) dims[dims.length - 1];
        }

        /** Values per written row: the product of the other dims. */
        public int rowLength() {
            long n = 1;
            for (int i = 0; i < Math.max(1, dims.length - 1); i++) {
                n *= dims[i];
            }
            return (int) n;
        }
    }

    public static final String HF_PREFIX = "model.visual.";

    /** Every tensor of the tower, in file order. */
    public static List<Entry> of(VisionTowerShape s) {
        int h = s.hidden();
        List<Entry> out = new ArrayList<>();
        for (int j = 0; j < s.depth(); j++) {
            String hf = HF_PREFIX + "blocks." + j + ".";
            String v = "v.blk." + j + ".";
            linear(out, hf + "attn.proj", v + "attn_out", h, h, Role.MATRIX);
            linear(out, hf + "attn.qkv", v + "attn_qkv", h, 3 * h, Role.MATRIX);
            linear(out, hf + "mlp.linear_fc1", v + "ffn_up", h, s.intermediate(), Role.MATRIX);
            linear(out, hf + "mlp.linear_fc2", v + "ffn_down", s.intermediate(), h, Role.MATRIX);
            norm(out, hf + "norm1", v + "ln1", h);
            norm(out, hf + "norm2", v + "ln2", h);
        }
        linear(out, HF_PREFIX + "merger.linear_fc1", "mm.0", s.mergedWidth(), s.mergedWidth(), Role.MERGER);
        linear(out, HF_PREFIX + "merger.linear_fc2", "mm.2", s.mergedWidth(), s.outHidden(), Role.MERGER);
        norm(out, HF_PREFIX + "merger.norm", "v.post_ln", h);
        out.add(new Entry("v.patch_embd.bias", HF_PREFIX + "patch_embed.proj.bias", Role.VECTOR, new long[] {h}, 0));
        long[] kernel = {s.patchSize(), s.patchSize(), s.inChannels(), h};
        out.add(new Entry("v.patch_embd.weight", HF_PREFIX + "patch_embed.proj.weight", Role.PATCH, kernel, 0));
        out.add(new Entry("v.patch_embd.weight.1", HF_PREFIX + "patch_embed.proj.weight", Role.PATCH, kernel, 1));
        out.add(new Entry("v.position_embd.weight", HF_PREFIX + "pos_embed.weight", Role.POSITION,
                new long[] {h, s.positionEmbeddings()}, 0));
        // llama.cpp walks the checkpoint's tensors in sorted name order (so blocks.10 comes before blocks.2)
        List<Entry> sorted = new ArrayList<>(out);
        sorted.sort(Comparator.comparing(Entry::hfName));
        return sorted;
    }

    /**
     * The storage type, after llama.cpp's converter: vectors and the position table F32; the patch kernel
     * F16 in an F16 file, else F32; the encoder matrices in {@code type}; the merger's two matrices Q8_0 when
     * the text model is quantised ({@code int8} / {@code int4}), else {@code type}. A matrix whose rows are
     * not whole Q8_0 blocks falls back to {@code type}, reported through {@code warn}.
     */
    public static GgmlType typeOf(Entry e, MmprojType type, QuantRecipe recipe, Consumer<String> warn) {
        return switch (e.role()) {
            case VECTOR, POSITION -> GgmlType.F32;
            case PATCH -> type.patchType();
            case MATRIX -> type.matrixType();
            case MERGER -> {
                if (recipe == QuantRecipe.BF16) {
                    yield type.matrixType();
                }
                if (e.rowLength() % GgmlType.Q8_0.blockSize() != 0) {
                    warn.accept(e.name() + ": row length " + e.rowLength() + " is not a multiple of the Q8_0 block size; stored as "
                            + type.matrixType());
                    yield type.matrixType();
                }
                yield GgmlType.Q8_0;
            }
        };
    }

    private static void linear(List<Entry> out, String hf, String name, int in, int outDim, Role role) {
        out.add(new Entry(name + ".bias", hf + ".bias", Role.VECTOR, new long[] {outDim}, 0));
        out.add(new Entry(name + ".weight", hf + ".weight", role, new long[] {in, outDim}, 0));
    }

    private static void norm(List<Entry> out, String hf, String name, int n) {
        out.add(new Entry(name + ".bias", hf + ".bias", Role.VECTOR, new long[] {n}, 0));
        out.add(new Entry(name + ".weight", hf + ".weight", Role.VECTOR, new long[] {n}, 0));
    }
}
