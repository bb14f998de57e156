package dev.edgelm.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.npy.Npy;
import dev.edgelm.model.Logit;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/** The int8 and int4 recipes: which tensors get which type, per-block fidelity, and the cost in logits. */
class QuantRecipeTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"tiny-a", "tiny-b"})
    void quantisedRecipesFollowTheReleasedBundles(String fixture) {
        List<String> warnings = new ArrayList<>();
        Path bf16 = ConverterParityTest.convert(dir, fixture, QuantRecipe.BF16, warnings);
        Path int8 = ConverterParityTest.convert(dir, fixture, QuantRecipe.INT8, warnings);
        Path int4 = ConverterParityTest.convert(dir, fixture, QuantRecipe.INT4, warnings);
        checkTypesAndBlocks(bf16, int8, QuantRecipe.INT8);
        checkTypesAndBlocks(bf16, int4, QuantRecipe.INT4);

        int[] ids = Npy.read(ConverterParityTest.FIXTURES.resolve(fixture + "/golden/prompt_ids.npy")).toIntArray();
        float[] golden = Npy.read(ConverterParityTest.FIXTURES.resolve(fixture + "/golden/logits_full.npy")).floats();
        int vocab = golden.length / ids.length;
        float[] l8 = ConverterParityTest.logits(int8, ids);
        float[] l4 = ConverterParityTest.logits(int4, ids);
        double kl8 = Logit.meanKl(golden, l8, ids.length, vocab);
        double kl4 = Logit.meanKl(golden, l4, ids.length, vocab);
        System.out.printf("%s int8: top-1 %d/%d, mean KL %.3e, max abs %.3f | int4: top-1 %d/%d, mean KL %.3e, max abs %.3f%n",
                fixture, Logit.sameArgmax(golden, l8, ids.length, vocab), ids.length, kl8, Logit.maxAbsDiff(golden, l8),
                Logit.sameArgmax(golden, l4, ids.length, vocab), ids.length, kl4, Logit.maxAbsDiff(golden, l4));
        assertTrue(kl8 < kl4, "int8 is closer to the golden than int4: " + kl8 + " vs " + kl4);
        assertTrue(Logit.maxAbsDiff(golden, l8) < Logit.maxAbsDiff(golden, l4));
    }

    /**
     * Every 2-D matrix has the recipe's type and each of its blocks decodes to the bf16 file's values
     * within one quantisation step (Q8_0: half a step of amax/127; Q4_0: a full step of amax/8, since the
     * top code is clamped; both plus the fp16 rounding of the scale); every other tensor is identical F32.
     */
    private static void checkTypesAndBlocks(Path bf16Path, Path quantPath, QuantRecipe recipe) {
        try (GgufFile ref = GgufFile.open(bf16Path); GgufFile q = GgufFile.open(quantPath)) {
            assertEquals(ref.tensorInfos().keySet(), q.tensorInfos().keySet());
            for (GgufTensorInfo info : q.tensorInfos().values()) {
                GgufTensor t = q.tensor(info);
                GgufTensor r = ref.tensor(info.name());
                boolean matrix = info.nDims() == 2 && !info.name().contains("ssm_conv1d");
                if (!matrix) {
                    assertEquals(GgmlType.F32, info.type(), info.name());
                    assertEquals(r.data().mismatch(t.data()), -1, info.name() + " identical");
                    continue;
                }
                boolean embedding = info.name().equals("token_embd.weight") || info.name().equals("output.weight");
                // the released bundles: int8 is Q8_0 throughout; int4 is Q4_0 except the embedding and head (Q8_0)
                GgmlType expected = embedding || recipe == QuantRecipe.INT8 ? GgmlType.Q8_0 : GgmlType.Q4_0;
                assertEquals(expected, info.type(), info.name());
                WeightMatrix wq = t.asMatrix();
                WeightMatrix wr = r.asMatrix();
                float[] a = new float[wr.cols()];
                float[] b = new float[wq.cols()];
                for (int row = 0; row < wr.rows(); row++) {
                    wr.decodeRow(row, a, 0);
                    wq.decodeRow(row, b, 0);
                    for (int blk = 0; blk < a.length; blk += 32) {
                        float amax = 0;
                        for (int j = blk; j < blk + 32; j++) {
                            amax = Math.max(amax, Math.abs(a[j]));
                        }
                        // rounding to the code grid, plus the fp16 rounding of the scale (relative 2^-11, times up to 127 or 8 codes)
                        float step = (expected == GgmlType.Q8_0 ? amax / 127 / 2 : amax / 8) + amax / 1024;
                        for (int j = blk; j < blk + 32; j++) {
                            assertTrue(Math.abs(a[j] - b[j]) <= step + 1e-7f,
                                    info.name() + " row " + row + " col " + j + ": " + a[j] + " vs " + b[j]);
                        }
                    }
                }
            }
        }
    }
}
