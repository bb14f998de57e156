package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.edgelm.util.EdgeLmException;
import org.junit.jupiter.api.Test;

/** Frequency penalty, the constraint hook and log-probabilities, on hand-derived values. */
class SamplingAdditionsTest {
    @Test
    void frequencyPenaltyCountsEveryOccurrence() {
        Sampler s = new Sampler(GenerationOptions.builder().frequencyPenalty(0.5f).presencePenalty(0.25f).build(), 4, 1);
        s.accept(1);
        s.accept(1);
        s.accept(2);
        // token 1: 2 occurrences -> 10 - 2*0.5 - 0.25; token 2: one -> 10 - 0.5 - 0.25
        assertArrayEquals(new float[] {10f, 8.75f, 9.25f, 10f}, s.penalisedLogits(new float[] {10f, 10f, 10f, 10f}));
        assertThrows(EdgeLmException.class, () -> GenerationOptions.builder().frequencyPenalty(Float.NaN));
    }

    /** Allows only the token after the last one accepted (cyclically), and stopping after three tokens. */
    private static final class Cycle implements TokenConstraint {
        int last = -1;
        int count;

        @Override
        public void mask(float[] logits) {
            for (int i = 0; i < logits.length; i++) {
                if (i != (last + 1) % 3) {
                    logits[i] = Float.NEGATIVE_INFINITY;
                }
            }
        }

        @Override
        public void accept(int token) {
            last = token;
            count++;
        }

        @Override
        public boolean canStop() {
            return count >= 3;
        }
    }

    @Test
    void aConstraintMasksAndDecidesWhenStopTokensAreAllowed() {
        // vocab 4, token 3 is the stop token and the most likely one at every step
        GenerationOptions o = GenerationOptions.builder().stopTokenIds(3).constraint(Cycle::new).build();
        Sampler s = new Sampler(o, 4, 1);
        float[] logits = {0f, 1f, 2f, 9f};
        int[] got = new int[4];
        for (int i = 0; i < 4; i++) {
            got[i] = s.sample(logits);
            if (got[i] != 3) {
                s.accept(got[i]);
            }
        }
        // 0, 1, 2 are forced by the constraint; then it may stop, and the stop token is the most likely
        assertArrayEquals(new int[] {0, 1, 2, 3}, got);
        // sampling at a temperature obeys the mask too
        Sampler t = new Sampler(GenerationOptions.builder().temperature(1f).stopTokenIds(3).constraint(Cycle::new).build(), 4, 7);
        assertEquals(0, t.sample(logits));
    }

    @Test
    void logprobsAreLogSoftmaxWithTheTopKInOrder() {
        // probabilities 0.5, 0.25, 0.125, 0.125 as logits ln p
        float[] l = {(float) Math.log(0.125), (float) Math.log(0.5), (float) Math.log(0.125), (float) Math.log(0.25)};
        TokenLogprobs lp = TokenLogprobs.of(l, 3, 3);
        assertEquals(Math.log(0.25), lp.logprob(), 1e-6);
        assertArrayEquals(new int[] {1, 3, 0}, lp.topIds(), "ties: the lower id first");
        assertEquals(Math.log(0.5), lp.topLogprobs()[0], 1e-6);
        assertEquals(Math.log(0.125), lp.topLogprobs()[2], 1e-6);
        assertEquals(0, TokenLogprobs.of(l, 1, 0).topIds().length);
    }
}
