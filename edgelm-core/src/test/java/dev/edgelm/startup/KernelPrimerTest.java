package dev.edgelm.startup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensorInfo;
import dev.edgelm.format.gguf.GgufTensorTypes;
import dev.edgelm.model.Qwen35Config;
import dev.edgelm.synth.SynthShape;
import dev.edgelm.tensor.CausalAttention;
import dev.edgelm.tensor.GgmlType;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelPrimerTest {
    /** The primer is only worth its passes if its kernels take the branches the released models take. */
    @Test
    void tinyModelHasTheReleasedHeadGeometry() {
        Qwen35Config tiny = KernelPrimer.SHAPE.config();
        for (SynthShape released : SynthShape.RELEASED) {
            Qwen35Config c = released.config();
            assertEquals(c.headDim(), tiny.headDim(), released.size());
            assertEquals(c.rotaryDim(), tiny.rotaryDim(), released.size());
            assertEquals(c.numHeads() / c.numKvHeads(), tiny.numHeads() / tiny.numKvHeads(), released.size());
            assertEquals(c.linearKeyDim(), tiny.linearKeyDim(), released.size());
            assertEquals(c.linearValueDim(), tiny.linearValueDim(), released.size());
        }
        assertEquals(CausalAttention.GROUP, tiny.numHeads() / tiny.numKvHeads());
        boolean linear = false;
        boolean full = false;
        for (int l = 0; l < tiny.numLayers(); l++) {
            full |= tiny.fullAttention()[l];
            linear |= !tiny.fullAttention()[l];
        }
        assertTrue(linear && full, "both kinds of layer");
    }

    @Test
    void runsEveryPassAndLeavesNoFileBehind() throws IOException {
        long before = primerFiles();
        assertEquals(KernelPrimer.PASSES, KernelPrimer.runToCompletion());
        assertEquals(before, primerFiles());
    }

    /**
     * A primer that cannot finish its passes in time (here: 1 ms for twelve passes, each of which loads a tiny
     * model) is stopped, so the prompt never waits on it for long; its temporary file is gone all the same.
     */
    @Test
    void finishStopsAPrimerThatRunsPastItsWait() throws IOException {
        long before = primerFiles();
        KernelPrimer p = KernelPrimer.start();
        p.forModel(MINI.resolve("qwen35-mini-Q4_0.gguf"));
        p.finish(1);
        assertTrue(p.passesRun() < KernelPrimer.PASSES, p.passesRun() + " passes");
        assertEquals(before, primerFiles());
    }

    static final Path MINI = Path.of("src/test/resources/fixtures/gguf/mini");

    /** A role with two types in the real file (Q4_K_M's ffn_down) alternates over the tiny model's layers. */
    @Test
    void tinyTensorsTakeTheirNamesakesTypes() {
        Map<String, GgmlType> real = new LinkedHashMap<>();
        real.put("token_embd.weight", GgmlType.Q6_K);
        real.put("blk.0.ffn_down.weight", GgmlType.Q6_K);
        real.put("blk.1.ffn_down.weight", GgmlType.Q4_K);
        real.put("blk.2.ffn_down.weight", GgmlType.Q4_K);
        real.put("blk.0.attn_norm.weight", GgmlType.F32);
        List<GgufTensorInfo> tiny = List.of(
                new GgufTensorInfo("token_embd.weight", new long[] {256, 320}, GgmlType.Q8_0, 0),
                new GgufTensorInfo("blk.0.ffn_down.weight", new long[] {256, 256}, GgmlType.Q8_0, 0),
                new GgufTensorInfo("blk.1.ffn_down.weight", new long[] {256, 256}, GgmlType.Q8_0, 0),
                new GgufTensorInfo("blk.2.ffn_down.weight", new long[] {256, 256}, GgmlType.Q8_0, 0),
                new GgufTensorInfo("blk.3.ffn_down.weight", new long[] {128, 256}, GgmlType.Q8_0, 0), // 128: no K-quant
                new GgufTensorInfo("blk.0.ffn_up.weight", new long[] {256, 256}, GgmlType.Q8_0, 0), // not in the file
                new GgufTensorInfo("blk.0.attn_norm.weight", new long[] {256}, GgmlType.F32, 0));
        Map<String, GgmlType> plan = PrimerModel.plan(tiny, real);
        assertEquals(List.of(GgmlType.Q6_K, GgmlType.Q6_K, GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q8_0, GgmlType.Q8_0,
                GgmlType.F32), List.copyOf(plan.values()));
        assertEquals(256, PrimerModel.shapeFor(real).hiddenSize());
        assertEquals(128, PrimerModel.shapeFor(Map.of("blk.0.ffn_up.weight", GgmlType.Q4_0)).hiddenSize());
    }

    /**
     * The K-quant tiny model has rows of both kinds the working copies' kernels tell apart: 256 values (one Q6_K
     * super-block, decoded by scalar code; one half-width Q4Lanes group) and the MLP's 1024 (Q6_K super-block pairs;
     * full 32-block Q4Lanes groups, the 0.8B's rows). With 256-wide rows only, the first prompt of a Q4_K_M file
     * compiled the full-width paths itself. Q4_0 files get the MLP of 1024 on the narrow model.
     */
    @Test
    void kQuantTinyModelHasShortAndFullWidthRows() {
        SynthShape wide = PrimerModel.shapeFor(Map.of("blk.0.ffn_down.weight", GgmlType.Q6_K, "blk.0.attn_qkv.weight", GgmlType.Q4_K));
        assertEquals(256, wide.hiddenSize());
        assertEquals(1024, wide.intermediateSize());
        assertEquals(0, wide.intermediateSize() % (32 * 32), "whole groups of 32 blocks of 32");
        assertEquals(0, wide.intermediateSize() / 256 % 2, "whole pairs of super-blocks");
        SynthShape q4 = PrimerModel.shapeFor(Map.of("blk.0.ffn_down.weight", GgmlType.Q4_0, "token_embd.weight", GgmlType.Q8_0));
        assertEquals(128, q4.hiddenSize());
        assertEquals(1024, q4.intermediateSize(), "Q4_0's working copies are Q4Lanes too");
        assertEquals(256, PrimerModel.shapeFor(Map.of("blk.0.ffn_down.weight", GgmlType.Q8_0)).intermediateSize(),
                "the Q8_0 tiny model is unchanged");
    }

    /**
     * On a Q4_K_M-like file (the MLP's down projection Q4_K in some layers, Q6_K in others) the tiny model's plan puts
     * both types on rows of 1024 values: the full-group Q4Lanes path and Q6_K's super-block pairs both run.
     */
    @Test
    void kQuantPlanPutsBothTypesOnFullWidthRows() {
        Map<String, GgmlType> real = Map.of("blk.0.ffn_down.weight", GgmlType.Q4_K, "blk.1.ffn_down.weight", GgmlType.Q6_K,
                "blk.0.attn_qkv.weight", GgmlType.Q4_K, "blk.0.ffn_up.weight", GgmlType.Q4_K);
        SynthShape shape = PrimerModel.shapeFor(real);
        List<GgufTensorInfo> tiny = new java.util.ArrayList<>();
        for (dev.edgelm.convert.Qwen35Tensors.Entry e : dev.edgelm.convert.Qwen35Tensors.of(shape.config())) {
            tiny.add(new GgufTensorInfo(e.name(), e.dims(), e.type(dev.edgelm.convert.QuantRecipe.INT8, w -> {}), 0));
        }
        Map<String, GgmlType> plan = PrimerModel.plan(tiny, real);
        Set<GgmlType> onFullRows = EnumSet.noneOf(GgmlType.class);
        for (GgufTensorInfo t : tiny) {
            if (t.rowLength() == 1024) {
                onFullRows.add(plan.get(t.name()));
            }
        }
        assertTrue(onFullRows.contains(GgmlType.Q4_K), "Q4_K on a 1024-wide row: " + onFullRows);
        assertTrue(onFullRows.contains(GgmlType.Q6_K), "Q6_K on a 1024-wide row: " + onFullRows);
    }

    /**
     * For each llama.cpp file of the fixtures, the primer's model holds exactly the file's matrix types and opens
     * as a valid GGUF; on the Q3_K_M file (Q3_K, Q4_K, Q5_K, Q6_K) and the BF16 one every pass runs.
     */
    @Test
    void primesTheTypesOfTheRealFile(@TempDir Path dir) throws IOException {
        Set<GgmlType> covered = EnumSet.noneOf(GgmlType.class);
        for (String f : List.of("Q3_K_M", "Q2_K", "Q4_1", "Q5_0", "BF16")) {
            Map<String, GgmlType> real = GgufTensorTypes.read(MINI.resolve("qwen35-mini-" + f + ".gguf"));
            Path tiny = dir.resolve(f + ".gguf");
            PrimerModel.write(real, tiny);
            Set<GgmlType> want = EnumSet.copyOf(real.values());
            Set<GgmlType> got = EnumSet.noneOf(GgmlType.class);
            try (GgufFile g = GgufFile.open(tiny)) {
                g.tensorInfos().values().forEach(t -> got.add(t.type()));
            }
            assertEquals(want, got, f);
            covered.addAll(got);
            if (f.equals("Q3_K_M") || f.equals("BF16")) { // random K-quant blocks, float rows: the passes run (slow on a cold JVM)
                assertEquals(KernelPrimer.PASSES, KernelPrimer.runToCompletion(real), f);
            }
        }
        assertTrue(covered.containsAll(EnumSet.of(GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K,
                GgmlType.Q6_K, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.BF16)), covered.toString());
    }

    /** The thread waits for the file; closing before one is named ends it without a pass. */
    @Test
    void closedBeforeAFileIsNamedRunsNothing() {
        KernelPrimer p = KernelPrimer.start();
        p.close();
        assertEquals(0, p.passesRun());
    }

    private static long primerFiles() throws IOException {
        long n = 0;
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of(System.getProperty("java.io.tmpdir")), "edgelm-primer-*")) {
            for (Path ignored : d) {
                n++;
            }
        }
        return n;
    }
}
