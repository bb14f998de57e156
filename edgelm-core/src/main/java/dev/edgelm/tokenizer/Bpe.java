package dev.edgelm.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Byte-level BPE on one word: the word's UTF-8 bytes start as single-byte tokens, then the adjacent pair with
 * the lowest merge rank (leftmost on ties) is merged until no pair merges, exactly Hugging Face's order. Results
 * are cached per word.
 */
final class Bpe {
    private static final int CACHE_CAPACITY = 65536;
    private static final int CACHE_MAX_WORD = 256;
    /** Up to this many symbols a plain scan for the best pair beats the heap. */
    private static final int SCAN_LIMIT = 48;

    private final int[] byteTokens;
    private final MergeTable merges;
    /** Byte-level string to id, consulted first for the whole word when the model ignores merges (else null). */
    private final Map<String, Integer> wholeWords;
    private final ConcurrentHashMap<String, int[]> cache = new ConcurrentHashMap<>();

    Bpe(int[] byteTokens, MergeTable merges, Map<String, Integer> wholeWords) {
        this.byteTokens = byteTokens;
        this.merges = merges;
        this.wholeWords = wholeWords;
    }

    void encode(String word, IntList out) {
        int[] cached = cache.get(word);
        if (cached == null) {
            cached = encodeUncached(word);
            if (word.length() <= CACHE_MAX_WORD) {
                if (cache.size() >= CACHE_CAPACITY) {
                    cache.clear();
                }
                cache.put(word, cached);
            }
        }
        out.addAll(cached);
    }

    private int[] encodeUncached(String word) {
        byte[] bytes = utf8(word);
        if (wholeWords != null) {
            Integer id = wholeWords.get(ByteLevel.encode(bytes));
            if (id != null) {
                return new int[] {id};
            }
        }
        int[] ids = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            ids[i] = byteTokens[bytes[i] & 0xFF];
        }
        return ids.length <= SCAN_LIMIT ? mergeByScan(ids) : mergeByHeap(ids);
    }

    private static byte[] utf8(String word) {
        int n = word.length();
        for (int i = 0; i < n; i++) {
            if (word.charAt(i) >= 0x80) {
                return word.getBytes(StandardCharsets.UTF_8);
            }
        }
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) word.charAt(i);
        }
        return b;
    }

    private int[] mergeByScan(int[] ids) {
        int n = ids.length;
        while (n > 1) {
            long best = Long.MAX_VALUE;
            int at = -1;
            for (int i = 0; i + 1 < n; i++) {
                long m = merges.get(ids[i], ids[i + 1]);
                if (m >= 0 && m < best) {
                    best = m;
                    at = i;
                }
            }
            if (at < 0) {
                break;
            }
            ids[at] = (int) best;
            System.arraycopy(ids, at + 2, ids, at + 1, n - at - 2);
            n--;
        }
        return n == ids.length ? ids : java.util.Arrays.copyOf(ids, n);
    }

    /** The same order of merges for long words in O(n log n): a heap of (rank, position) with stale entries skipped. */
    private int[] mergeByHeap(int[] ids) {
        int n = ids.length;
        int[] next = new int[n];
        int[] prev = new int[n];
        for (int i = 0; i < n; i++) {
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        boolean[] gone = new boolean[n];
        LongHeap heap = new LongHeap(n);
        for (int i = 0; i + 1 < n; i++) {
            pushPair(heap, ids, i, i + 1);
        }
        while (!heap.isEmpty()) {
            long top = heap.pop();
            int rank = (int) (top >>> 32);
            int pos = (int) top;
            int right = next[pos];
            if (gone[pos] || right < 0) {
                continue;
            }
            long m = merges.get(ids[pos], ids[right]);
            if (m < 0 || (int) (m >>> 32) != rank) {
                continue;
            }
            ids[pos] = (int) m;
            gone[right] = true;
            next[pos] = next[right];
            if (next[pos] >= 0) {
                prev[next[pos]] = pos;
                pushPair(heap, ids, pos, next[pos]);
            }
            if (prev[pos] >= 0) {
                pushPair(heap, ids, prev[pos], pos);
            }
        }
        IntList out = new IntList(n);
        for (int i = 0; i >= 0; i = next[i]) {
            out.add(ids[i]);
        }
        return out.toArray();
    }

    private void pushPair(LongHeap heap, int[] ids, int left, int right) {
        long m = merges.get(ids[left], ids[right]);
        if (m >= 0) {
            heap.push((m & 0xFFFFFFFF00000000L) | left);
        }
    }

    /** A binary min-heap of longs. */
    private static final class LongHeap {
        private long[] a;
        private int size;

        LongHeap(int capacity) {
            a = new long[Math.max(capacity, 4)];
        }

        boolean isEmpty() {
            return size == 0;
        }

        void push(long v) {
            if (size == a.length) {
                a = java.util.Arrays.copyOf(a, size * 2);
            }
            int i = size++;
            while (i > 0) {
                int p = (i - 1) >>> 1;
                if (a[p] <= v) {
                    break;
                }
                a[i] = a[p];
                i = p;
            }
            a[i] = v;
        }

        long pop() {
            long top = a[0];
            long v = a[--size];
            int i = 0;
            while (true) {
                int c = 2 * i + 1;
                if (c >= size) {
                    break;
                }
                if (c + 1 < size && a[c + 1] < a[c]) {
                    c++;
                }
                if (a[c] >= v) {
                    break;
                }
                a[i] = a[c];
                i = c;
            }
            a[i] = v;
            return top;
        }
    }
}
