package dev.edgelm.engine.batch;

import dev.edgelm.model.SequenceState;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Snapshots of sequence states keyed by the token prefix they hold, least recently used evicted first,
 * bounded by the bytes of the snapshots ({@link SequenceState.Checkpoint#bytes()}: conv windows, recurrent
 * states and the KV cache up to the position) plus their keys. A linear-attention state cannot be cut back to an
 * earlier position, so reuse needs a snapshot taken exactly at a point the new prompt shares. Used by the
 * scheduler thread only.
 */
final class PrefixCache {
    record Entry(int[] tokens, SequenceState.Checkpoint snapshot, long bytes) {
        int length() {
            return tokens.length;
        }
    }

    private record Key(int[] tokens, int hash) {
        static Key of(int[] tokens) {
            return new Key(tokens, Arrays.hashCode(tokens));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hash == hash && Arrays.equals(k.tokens, tokens);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private final long budget;
    private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    PrefixCache(long budget) {
        this.budget = budget;
    }

    boolean enabled() {
        return budget > 0;
    }

    /**
     * The entry with the longest key that is a prefix of {@code prompt} and at most {@code maxLength} long, or
     * null; a hit becomes the most recently used.
     */
    Entry longestPrefix(int[] prompt, int maxLength) {
        Entry best = null;
        for (Entry e : entries.values()) {
            int n = e.length();
            if (n <= maxLength && (best == null || n > best.length())
                    && Arrays.equals(e.tokens, 0, n, prompt, 0, n)) {
                best = e;
            }
        }
        if (best != null) {
            entries.get(Key.of(best.tokens)); // touch
        }
        return best;
    }

    /** Whether a snapshot of {@code tokens[0, length)} would be new (and could fit). */
    boolean wants(int[] tokens, int length) {
        return enabled() && length > 0 && !entries.containsKey(Key.of(Arrays.copyOf(tokens, length)));
    }

    /** Keeps {@code snapshot} as the state after {@code tokens[0, length)}, evicting the least recently used to fit. */
    void put(int[] tokens, int length, SequenceState.Checkpoint snapshot) {
        int[] key = Arrays.copyOf(tokens, length);
        long size = snapshot.bytes() + 4L * length;
        if (size > budget) {
            return;
        }
        Entry old = entries.remove(Key.of(key));
        if (old != null) {
            bytes -= old.bytes();
        }
        Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator();
        while (bytes + size > budget && it.hasNext()) {
            bytes -= it.next().getValue().bytes();
            it.remove();
        }
        entries.put(Key.of(key), new Entry(key, snapshot, size));
        bytes += size;
    }

    int size() {
        return entries.size();
    }

    long bytes() {
        return bytes;
    }
}
