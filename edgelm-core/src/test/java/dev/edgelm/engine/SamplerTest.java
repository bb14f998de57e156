package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SamplerTest {
    /** Probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1. */
    private static final double[] P = {0.5, 0.3, 0.15, 0.05};

    private static float[] logitsOf(double... probs) {
        float[] l = new float[probs.length];
        for (int i = 0; i < l.length; i++) {
            l[i] = (float) Math.log(probs[i]);
        }
        return l;
    }

    private static Sampler sampler(GenerationOptions.Builder b, int vocab) {
        return new Sampler(b.build(), vocab, 42);
    }

    private static Sampler sampling(GenerationOptions.Builder b) {
        return sampler(b.temperature(1f), P.length);
    }

    private static Set<Integer> idsOf(Sampler.Distribution d) {
        Set<Integer> s = new TreeSet<>();
        for (int id : d.ids()) {
            s.add(id);
        }
        return s;
    }

    @Test
    void greedyTakesTheLowestIdAmongEqualMaxima() {
        Sampler s = sampler(GenerationOptions.builder(), 5);
        assertEquals(1, s.sample(new float[] {0f, 3f, -1f, 3f, 2f}));
        assertEquals(0, s.sample(new float[] {7f, 7f, 7f, 7f, 7f}));
    }

    @Test
    void topKOneEqualsGreedyAtAnyTemperature() {
        Random r = new Random(1);
        Sampler topK1 = sampler(GenerationOptions.builder().temperature(1.5f).topK(1).seed(3), 1000);
        for (int trial = 0; trial < 50; trial++) {
            float[] l = new float[1000];
            for (int i = 0; i < l.length; i++) {
                l[i] = (float) r.nextGaussian();
            }
            int expected = 0;
            for (int i = 1; i < l.length; i++) {
                if (l[i] > l[expected]) {
                    expected = i;
                }
            }
            assertEquals(expected, topK1.sample(l));
        }
    }

    @Test
    void sameSeedSameTokensOtherSeedOtherTokens() {
        Random r = new Random(5);
        float[] l = new float[300];
        for (int i = 0; i < l.length; i++) {
            l[i] = (float) r.nextGaussian();
        }
        GenerationOptions o = GenerationOptions.builder().temperature(1f).topP(0.95f).build();
        int[] a = new int[200];
        int[] b = new int[200];
        int[] c = new int[200];
        Sampler sa = new Sampler(o, l.length, 1234);
        Sampler sb = new Sampler(o, l.length, 1234);
        Sampler sc = new Sampler(o, l.length, 1235);
        for (int i = 0; i < a.length; i++) {
            a[i] = sa.sample(l);
            b[i] = sb.sample(l);
            c[i] = sc.sample(l);
        }
        assertArrayEquals(a, b);
        assertNotEquals(Arrays.toString(a), Arrays.toString(c));
    }

    @Test
    void drawsFollowTheProbabilities() {
        Sampler s = sampling(GenerationOptions.builder());
        int[] counts = new int[P.length];
        int n = 40_000;
        for (int i = 0; i < n; i++) {
            counts[s.sample(logitsOf(P))]++;
        }
        for (int i = 0; i < P.length; i++) {
            // 5 standard deviations of a binomial count
            double sd = Math.sqrt(n * P[i] * (1 - P[i]));
            assertEquals(n * P[i], counts[i], 5 * sd, "token " + i + ": " + Arrays.toString(counts));
        }
    }

    @Test
    void temperatureSharpensOrFlattens() {
        // at T = 2, p_i is proportional to sqrt(P_i)
        Sampler.Distribution d = sampler(GenerationOptions.builder().temperature(2f), 4).distribution(logitsOf(P));
        double z = 0;
        for (double p : P) {
            z += Math.sqrt(p);
        }
        for (int i = 0; i < d.ids().length; i++) {
            assertEquals(Math.sqrt(P[d.ids()[i]]) / z, d.probabilities()[i], 1e-6);
        }
    }

    @Test
    void topKKeepsTheKMostLikely() {
        float[] l = {0.1f, 2f, -1f, 1.5f, 1.5f, 3f, 0f};
        Sampler s = sampler(GenerationOptions.builder().temperature(1f).topK(3), l.length);
        // 5 (3.0), 1 (2.0), then the tie 3/4 (1.5) goes to the lower id
        assertEquals(Set.of(1, 3, 5), idsOf(s.distribution(l)));
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; i < 3000; i++) {
            seen.add(s.sample(l));
        }
        assertEquals(Set.of(1, 3, 5), seen);
    }

    @Test
    void topPKeepsTheSmallestPrefixReachingP() {
        // cumulative before each token: 0, 0.5, 0.8, 0.95
        assertEquals(Set.of(0), idsOf(sampling(GenerationOptions.builder().topP(0.49f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1), idsOf(sampling(GenerationOptions.builder().topP(0.51f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1), idsOf(sampling(GenerationOptions.builder().topP(0.79f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1, 2), idsOf(sampling(GenerationOptions.builder().topP(0.81f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1, 2, 3), idsOf(sampling(GenerationOptions.builder().topP(0.96f)).distribution(logitsOf(P))));
        Sampler.Distribution d = sampling(GenerationOptions.builder().topP(0.7f)).distribution(logitsOf(P));
        assertArrayEquals(new int[] {0, 1}, d.ids());
        assertArrayEquals(new double[] {0.5 / 0.8, 0.3 / 0.8}, d.probabilities(), 1e-6);
        Sampler s = sampling(GenerationOptions.builder().topP(0.7f));
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; i < 3000; i++) {
            seen.add(s.sample(logitsOf(P)));
        }
        assertEquals(Set.of(0, 1), seen);
    }

    @Test
    void topPWorksOnTheDistributionLeftByTopK() {
        // after top-k 2 the probabilities are 0.625 / 0.375: top-p 0.6 keeps only the first token,
        // while on the full distribution (0.5 first) it keeps two
        assertEquals(Set.of(0), idsOf(sampling(GenerationOptions.builder().topK(2).topP(0.6f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1), idsOf(sampling(GenerationOptions.builder().topP(0.6f)).distribution(logitsOf(P))));
    }

    @Test
    void minPDropsTokensBelowAFractionOfTheMax() {
        // threshold = min_p * 0.5
        assertEquals(Set.of(0, 1, 2), idsOf(sampling(GenerationOptions.builder().minP(0.2f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0, 1), idsOf(sampling(GenerationOptions.builder().minP(0.35f)).distribution(logitsOf(P))));
        assertEquals(Set.of(0), idsOf(sampling(GenerationOptions.builder().minP(0.61f)).distribution(logitsOf(P))));
        Sampler.Distribution d = sampling(GenerationOptions.builder().minP(0.2f).topP(0.7f)).distribution(logitsOf(P));
        assertArrayEquals(new int[] {0, 1}, d.ids());
        // min-p after top-p: top-p 0.81 keeps {0,1,2}, min-p 0.35 then keeps {0,1}
        assertEquals(Set.of(0, 1), idsOf(sampling(GenerationOptions.builder().topP(0.81f).minP(0.35f)).distribution(logitsOf(P))));
    }

    @Test
    void repetitionPenaltyHitsContextAndGeneratedTokensPresencePenaltyOnlyGeneratedOnes() {
        float[] l = {2f, -1f, 0.5f, 3f, -2f, 1f};
        Sampler s = sampler(GenerationOptions.builder().repetitionPenalty(2f).presencePenalty(0.5f), l.length);
        s.observeContext(new int[] {0, 1, 0, 1}, 0, 4);
        s.accept(3);
        s.accept(3);
        s.accept(5);
        // 0: 2/2; 1: -1*2; 2: untouched; 3: 3/2 - 0.5 (once, though generated twice); 4: untouched; 5: 1/2 - 0.5
        float[] expected = {1f, -2f, 0.5f, 1f, -2f, 0f};
        assertArrayEquals(expected, s.penalisedLogits(l), 1e-6f);
        assertArrayEquals(new float[] {2f, -1f, 0.5f, 3f, -2f, 1f}, l, "input logits untouched");
        // greedy sees the penalised logits: 3 (1.0) ties 0 (1.0) -> lowest id
        assertEquals(0, s.sample(l));
    }

    @Test
    void samplingKeysOrderByLogitThenId() {
        float[] values = {Float.NEGATIVE_INFINITY, -3.5f, -0f, 0f, 1e-30f, 2f, Float.POSITIVE_INFINITY};
        for (float v : values) {
            assertEquals(Float.floatToIntBits(v), Float.floatToIntBits(Sampler.logit(Sampler.key(v, 7))));
        }
        for (int i = 0; i + 1 < values.length; i++) {
            assertTrue(Sampler.key(values[i + 1], 0) < Sampler.key(values[i], 0), "higher logit sorts first");
        }
        assertTrue(Sampler.key(1f, 3) < Sampler.key(1f, 4), "equal logits: lower id first");
    }
}
