package dev.edgelm.tokenizer;

import java.util.Arrays;

/**
 * BPE merges keyed by the ids of the two parts: open addressing over primitive longs (a key is
 * {@code left << 32 | right}, a value {@code rank << 32 | mergedId}), so the merge loop never boxes.
 */
final class MergeTable {
    private static final long EMPTY = -1L;
    private final long[] keys;
    private final long[] values;
    private final int mask;

    MergeTable(int expected) {
        int cap = Integer.highestOneBit(Math.max(4, expected * 2 - 1)) << 1;
        keys = new long[cap];
        values = new long[cap];
        mask = cap - 1;
        Arrays.fill(keys, EMPTY);
    }

    private static int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 29));
    }

    /** Adds a merge; a pair listed twice keeps its later rank, as Hugging Face's map of merges does. */
    void put(int left, int right, int rank, int merged) {
        long key = ((long) left << 32) | (right & 0xFFFFFFFFL);
        int i = slot(key) & mask;
        while (keys[i] != EMPTY) {
            if (keys[i] == key) {
                break;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = ((long) rank << 32) | (merged & 0xFFFFFFFFL);
    }

    /** {@code rank << 32 | mergedId} of the pair, or -1 when the pair does not merge. */
    long get(int left, int right) {
        long key = ((long) left << 32) | (right & 0xFFFFFFFFL);
        int i = slot(key) & mask;
        while (true) {
            long k = keys[i];
            if (k == key) {
                return values[i];
            }
            if (k == EMPTY) {
                return -1L;
            }
            i = (i + 1) & mask;
        }
    }
}
