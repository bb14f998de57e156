package dev.edgelm.grammar;

import dev.edgelm.engine.TokenConstraint;
import dev.edgelm.util.EdgeLmException;

/**
 * Constrained decoding by a {@link Grammar}: each step allows exactly the tokens whose bytes the grammar
 * accepts next, found by walking the vocabulary trie from the matcher's state (a subtree is cut at the
 * first byte the grammar refuses). The mask of a state is remembered, so a state met again (inside a
 * string, between array items) costs one pass over the logits. Stopping is allowed when the text so far
 * is a complete sentence.
 */
public final class GrammarConstraint implements TokenConstraint {
    /** Masks remembered per generation ({@code vocab / 8} bytes each). */
    static final int MASKS_KEPT = 128;

    private final Vocabulary vocab;
    private final GrammarMatcher matcher;
    private int[] nodeStack = new int[256];
    private GrammarMatcher.State[] stateStack = new GrammarMatcher.State[256];

    public GrammarConstraint(Grammar grammar, Vocabulary vocab) {
        this.vocab = vocab;
        this.matcher = new GrammarMatcher(grammar);
    }

    /** A constraint per generation, all from the same grammar and vocabulary. */
    public static TokenConstraint.Factory factory(Grammar grammar, Vocabulary vocab) {
        return () -> new GrammarConstraint(grammar, vocab);
    }

    @Override
    public void mask(float[] logits) {
        long[] m = allowed();
        int n = Math.min(logits.length, vocab.size());
        for (int w = 0; w * 64 < n; w++) {
            long bits = m[w];
            if (bits == -1L) {
                continue;
            }
            int base = w * 64;
            int end = Math.min(64, n - base);
            for (int i = 0; i < end; i++) {
                if ((bits & (1L << i)) == 0) {
                    logits[base + i] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        for (int i = n; i < logits.length; i++) {
            logits[i] = Float.NEGATIVE_INFINITY;
        }
    }

    /** Whether token {@code id} is allowed next. */
    public boolean allows(int id) {
        return id >= 0 && id < vocab.size() && (allowed()[id >>> 6] & (1L << id)) != 0;
    }

    /** The allowed tokens as a bit set over ids (cached per state; do not modify). */
    long[] allowed() {
        matcher.trim();
        GrammarMatcher.State s = matcher.current();
        if (s.mask == null) {
            s.mask = walk(s);
            matcher.rememberMask(s, MASKS_KEPT);
        }
        return s.mask;
    }

    private long[] walk(GrammarMatcher.State start) {
        matcher.resetWork();
        long[] bits = new long[(vocab.size() + 63) / 64];
        int top = 0;
        nodeStack[top] = 0;
        stateStack[top++] = start;
        while (top > 0) {
            int node = nodeStack[--top];
            GrammarMatcher.State s = stateStack[top];
            for (int c = vocab.firstChild[node]; c >= 0; c = vocab.nextSibling[c]) {
                GrammarMatcher.State next = matcher.step(s, vocab.nodeByte[c]);
                if (next == GrammarMatcher.DEAD) {
                    continue;
                }
                for (int t = vocab.nodeToken[c]; t >= 0; t = vocab.sameBytes[t]) {
                    bits[t >>> 6] |= 1L << t;
                }
                if (vocab.firstChild[c] >= 0) {
                    if (top == nodeStack.length) {
                        nodeStack = java.util.Arrays.copyOf(nodeStack, 2 * top);
                        stateStack = java.util.Arrays.copyOf(stateStack, 2 * top);
                    }
                    nodeStack[top] = c;
                    stateStack[top++] = next;
                }
            }
        }
        return bits;
    }

    @Override
    public void accept(int token) {
        byte[] b = vocab.bytes(token);
        if (b == null || !matcher.accept(b)) {
            throw new EdgeLmException("token " + token + " is not allowed by the grammar here");
        }
    }

    @Override
    public boolean canStop() {
        return matcher.canStop();
    }
}
