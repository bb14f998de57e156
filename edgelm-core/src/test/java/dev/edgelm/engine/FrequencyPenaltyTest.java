package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/** OpenAI's frequency penalty: a token's logit drops by f per time it was generated; the prompt does not count. */
class FrequencyPenaltyTest {
    @Test
    void subtractsThePenaltyOncePerOccurrenceOfAGeneratedToken() {
        GenerationOptions o = GenerationOptions.builder().frequencyPenalty(0.5f).presencePenalty(0.25f).build();
        Sampler s = new Sampler(o, 4, 1);
        s.observeContext(new int[] {0, 0, 3}, 0, 3); // context only: no frequency or presence penalty
        s.accept(2);
        s.accept(2);
        s.accept(1);
        // by hand: token 1 generated once: 2 - 0.5 - 0.25; token 2 twice: 3 - 2 x 0.5 - 0.25
        assertArrayEquals(new float[] {1f, 1.25f, 1.75f, 0f}, s.penalisedLogits(new float[] {1f, 2f, 3f, 0f}));
    }
}
