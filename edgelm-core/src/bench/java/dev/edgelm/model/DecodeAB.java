package dev.edgelm.model;

import dev.edgelm.tensor.Parallel;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Decode steps of one model under several settings of the decode structure, alternating in one JVM (the order
 * rotated every round), so that a shared host's drift hits every setting alike: {@code base} (one section per
 * matrix, 8 chunks per slice), {@code chunks} (chunks sized by cost), {@code fused} (chunks sized by cost and the
 * projections of one input in one section). Prints each round's decode steps per second and the medians.
 * {@code java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp edgelm.jar:bench-classes
 * dev.edgelm.model.DecodeAB MODEL.gguf THREADS ROUNDS STEPS [SETTING...]}; a SETTING {@code fused:COST} or
 * {@code unfused:COST} (COST: multiply-adds per chunk, 0 for 8 chunks per slice) replaces the three above.
 */
public final class DecodeAB {
    public static void main(String[] a) throws Exception {
        Path file = Path.of(a[0]);
        int threads = Integer.parseInt(a[1]);
        int rounds = Integer.parseInt(a[2]);
        int steps = Integer.parseInt(a[3]);
        var chunkCost = Parallel.class.getDeclaredField("chunkCost");
        chunkCost.setAccessible(true);
        long defaultCost = chunkCost.getLong(null);
        String[] names = a.length > 4 ? Arrays.copyOfRange(a, 4, a.length) : new String[] {"base", "chunks", "fused"};
        settings = a.length > 4 ? names : null;
        double[][] rate = new double[names.length][rounds];
        try (Qwen35Model model = ModelLoader.load(file, threads)) {
            int[] prompt = new int[16];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = 1000 + 7 * i;
            }
            float[] logits = new float[model.config().vocabSize()];
            for (int v = 0; v < names.length; v++) { // warm-up: every setting compiled
                set(v, chunkCost, defaultCost);
                DecodeSweep.decode(model, prompt, logits, steps);
            }
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("round " + r + ":");
                for (int k = 0; k < names.length; k++) {
                    int v = (r + k) % names.length;
                    set(v, chunkCost, defaultCost);
                    rate[v][r] = DecodeSweep.decode(model, prompt, logits, steps);
                    line.append(String.format(" %s %.2f", names[v], rate[v][r]));
                }
                System.out.println(line);
            }
        }
        for (int v = 0; v < names.length; v++) {
            double[] s = rate[v].clone();
            Arrays.sort(s);
            System.out.printf("%s: median %.2f tok/s (min %.2f, max %.2f)%n", names[v], s[rounds / 2], s[0], s[rounds - 1]);
        }
    }

    private static String[] settings;

    private static void set(int variant, java.lang.reflect.Field chunkCost, long defaultCost) throws Exception {
        if (settings != null) {
            String[] p = settings[variant].split(":");
            chunkCost.setLong(null, Long.parseLong(p[1]));
            Qwen35Model.fusedDecode = p[0].equals("fused");
            return;
        }
        chunkCost.setLong(null, variant == 0 ? 0 : defaultCost);
        Qwen35Model.fusedDecode = variant == 2;
    }
}
