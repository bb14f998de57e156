package dev.edgelm.tensor.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.format.gguf.GgufFile;
import dev.edgelm.format.gguf.GgufTensor;
import dev.edgelm.tensor.GgmlType;
import dev.edgelm.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The kernels against files written by llama.cpp's {@code llama-quantize} (fixtures/gguf/mini). The BF16
 * file holds the float model exactly, so it is the reference: every block-format tensor of the quantised
 * files is dequantised and compared with it, per block, against the error the format allows; and the
 * Q8_0 / Q4_0 quantisers, run on the BF16 values, must reproduce llama.cpp's bytes exactly.
 */
class LlamaCppFilesTest {
    private static final Path DIR = Path.of("src/test/resources/fixtures/gguf/mini");
    private static GgufFile reference;

    @BeforeAll
    static void openReference() {
        reference = open("BF16");
    }

    @AfterAll
    static void closeReference() {
        reference.close();
    }

    private static GgufFile open(String format) {
        return GgufFile.open(DIR.resolve("qwen35-mini-" + format + ".gguf"));
    }

    private static int rows(GgufTensor t) {
        return (int) t.info().rowCount();
    }

    private static int cols(GgufTensor t) {
        return (int) t.info().rowLength();
    }

    private static float[] referenceValues(String name) {
        GgufTensor t = reference.tensor(name);
        assertNotNull(t, "no tensor " + name + " in the BF16 file");
        assertEquals(GgmlType.BF16, t.type());
        WeightMatrix m = GgmlMatrices.create(t.type(), t.data(), rows(t), cols(t), "tensor " + name);
        float[] all = new float[rows(t) * cols(t)];
        for (int r = 0; r < rows(t); r++) {
            m.decodeRow(r, all, r * cols(t));
        }
        return all;
    }

    /**
     * Largest per-block error allowed, as a fraction of the block's largest |x|, from each format's rounding
     * rule plus the fp16 rounding of its scales (relative 2^-11). Legacy formats: Q8_0 half a step of
     * amax/127; Q4_0 / Q5_0 one full step (the value opposite the signed max is clamped); Q4_1 half a step
     * of (max - min)/15 <= 2 amax/15. The k-quants' searched scales have no closed bound; these are a
     * quarter to a half of their coarsest step over the super-block's range, still far below the ~amax
     * error of a mis-read layout.
     */
    private static double bound(GgmlType type) {
        double h = 0x1p-11;
        return switch (type) {
            case Q8_0 -> (0.5 + 127 * h) / 127;
            case Q4_0 -> (1 + 8 * h) / 8;
            case Q5_0 -> (1 + 16 * h) / 16;
            case Q4_1 -> 1.0 / 15 + 3 * h;
            case Q6_K -> 0.05;
            case Q5_K -> 0.1;
            case Q4_K -> 0.2;
            case Q3_K -> 0.35;
            case Q2_K -> 0.6;
            default -> throw new AssertionError(type);
        };
    }

    private record Stats(double maxRatio, double sumSqErr, double sumSq, int tensors) {}

    @Test
    void dequantisedTensorsMatchTheFloatModel() {
        Map<GgmlType, Stats> stats = new EnumMap<>(GgmlType.class);
        for (String file : new String[] {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q3_K_M", "Q2_K"}) {
            try (GgufFile q = open(file)) {
                for (GgufTensor t : q.tensors()) {
                    if (t.type().blockSize() == 1) {
                        continue;
                    }
                    float[] ref = referenceValues(t.name());
                    WeightMatrix m = GgmlMatrices.create(t.type(), t.data(), rows(t), cols(t), "tensor " + t.name());
                    float[] row = new float[cols(t)];
                    int block = t.type().blockSize();
                    double maxRatio = 0;
                    double sumSqErr = 0;
                    double sumSq = 0;
                    for (int r = 0; r < rows(t); r++) {
                        m.decodeRow(r, row, 0);
                        for (int b = 0; b < cols(t); b += block) {
                            double amax = 0;
                            double err = 0;
                            for (int i = b; i < b + block; i++) {
                                double x = ref[r * cols(t) + i];
                                amax = Math.max(amax, Math.abs(x));
                                err = Math.max(err, Math.abs(row[i] - x));
                                sumSqErr += (row[i] - x) * (row[i] - x);
                                sumSq += x * x;
                            }
                            if (amax > 0) {
                                maxRatio = Math.max(maxRatio, err / amax);
                            }
                        }
                    }
                    assertTrue(maxRatio <= bound(t.type()), file + " " + t.name() + " (" + t.type() + "): block error "
                            + maxRatio + " of amax exceeds " + bound(t.type()));
                    Stats s = stats.getOrDefault(t.type(), new Stats(0, 0, 0, 0));
                    stats.put(t.type(), new Stats(Math.max(s.maxRatio, maxRatio), s.sumSqErr + sumSqErr, s.sumSq + sumSq,
                            s.tensors + 1));
                }
            }
        }
        assertEquals(9, stats.size(), "block types covered: " + stats.keySet());
        stats.forEach((type, s) -> System.out.printf("%-5s %3d tensors: max block error %.4f of amax (bound %.4f), "
                + "rms error %.4f of rms value%n", type, s.tensors, s.maxRatio, bound(type), Math.sqrt(s.sumSqErr / s.sumSq)));
    }

    @Test
    void q8_0QuantiserReproducesLlamaCppBytes() {
        assertQuantiserMatches("Q8_0", GgmlType.Q8_0);
    }

    @Test
    void q4_0QuantiserReproducesLlamaCppBytes() {
        assertQuantiserMatches("Q4_0", GgmlType.Q4_0);
    }

    private static void assertQuantiserMatches(String file, GgmlType type) {
        int checked = 0;
        try (GgufFile q = open(file)) {
            for (GgufTensor t : q.tensors()) {
                if (t.type() != type) {
                    continue;
                }
                float[] ref = referenceValues(t.name());
                MemorySegment mine = Arena.ofAuto().allocate(t.data().byteSize());
                if (type == GgmlType.Q8_0) {
                    Q8_0Matrix.quantize(ref, 0, ref.length, mine, 0);
                } else {
                    Q4_0Matrix.quantize(ref, 0, ref.length, mine, 0);
                }
                long mismatch = mine.mismatch(t.data());
                assertEquals(-1, mismatch, t.name() + ": first differing byte");
                checked++;
            }
        }
        assertTrue(checked >= 30, "only " + checked + " " + type + " tensors");
    }
}
