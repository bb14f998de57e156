package dev.edgelm.grammar;

import dev.edgelm.tokenizer.Tokenizer;
import java.util.Arrays;
import java.util.Comparator;

/**
 * The byte strings of a model's tokens, in a trie (first child / next sibling arrays), so that a mask walks
 * each shared prefix once instead of running the matcher over every token. Special tokens, ids the
 * tokenizer lacks and tokens with no bytes are left out: they are never allowed inside a grammar (the
 * sampler lets stop tokens through when the grammar may end). Immutable and shared by all generations.
 */
public final class Vocabulary {
    private final int size;
    private final byte[][] bytes;
    // trie: node 0 is the root (the empty prefix)
    final byte[] nodeByte;
    final int[] firstChild;
    final int[] nextSibling;
    /** First token whose bytes end at the node, or -1; further ones chained through {@link #sameBytes}. */
    final int[] nodeToken;
    final int[] sameBytes;
    final int nodes;

    /** {@code tokenBytes[id]} = the bytes of token {@code id}, or null for one never allowed. */
    public Vocabulary(byte[][] tokenBytes) {
        this.size = tokenBytes.length;
        this.bytes = new byte[size][];
        Integer[] order = new Integer[size];
        int count = 0;
        long total = 1;
        for (int id = 0; id < size; id++) {
            byte[] b = tokenBytes[id];
            if (b != null && b.length > 0) {
                bytes[id] = b.clone();
                order[count++] = id;
                total += b.length;
            }
        }
        Integer[] ids = Arrays.copyOf(order, count);
        Arrays.sort(ids, Comparator.comparing((Integer id) -> bytes[id], Arrays::compareUnsigned));
        int cap = (int) Math.min(total, Integer.MAX_VALUE - 8);
        byte[] nb = new byte[cap];
        int[] fc = new int[cap];
        int[] ns = new int[cap];
        int[] nt = new int[cap];
        int[] lastChild = new int[cap];
        Arrays.fill(fc, -1);
        Arrays.fill(ns, -1);
        Arrays.fill(nt, -1);
        Arrays.fill(lastChild, -1);
        sameBytes = new int[size];
        Arrays.fill(sameBytes, -1);
        int n = 1;
        int[] path = new int[64];
        byte[] prev = new byte[0];
        for (int id : ids) {
            byte[] b = bytes[id];
            if (path.length < b.length + 1) {
                path = Arrays.copyOf(path, 2 * b.length + 1);
            }
            int lcp = 0;
            while (lcp < b.length && lcp < prev.length && b[lcp] == prev[lcp]) {
                lcp++;
            }
            path[0] = 0;
            for (int d = lcp; d < b.length; d++) {
                int parent = path[d];
                int node = n++;
                nb[node] = b[d];
                if (lastChild[parent] < 0) {
                    fc[parent] = node;
                } else {
                    ns[lastChild[parent]] = node;
                }
                lastChild[parent] = node;
                path[d + 1] = node;
            }
            int end = path[b.length];
            if (nt[end] < 0) {
                nt[end] = id;
            } else {
                sameBytes[id] = nt[end];
                nt[end] = id;
            }
            prev = b;
        }
        nodes = n;
        nodeByte = Arrays.copyOf(nb, n);
        firstChild = Arrays.copyOf(fc, n);
        nextSibling = Arrays.copyOf(ns, n);
        nodeToken = Arrays.copyOf(nt, n);
    }

    /** The text tokens of {@code tokenizer} over a model vocabulary of {@code modelVocab} ids. */
    public static Vocabulary of(Tokenizer tokenizer, int modelVocab) {
        byte[][] out = new byte[modelVocab][];
        for (int id = 0; id < modelVocab; id++) {
            if (tokenizer.hasToken(id) && !tokenizer.isSpecial(id)) {
                out[id] = tokenizer.bytes(id);
            }
        }
        return new Vocabulary(out);
    }

    /** Number of ids (allowed or not). */
    public int size() {
        return size;
    }

    /** The bytes of {@code id}, or null if it is never allowed. */
    byte[] bytes(int id) {
        return id >= 0 && id < size ? bytes[id] : null;
    }

    /** Trie nodes (for measurements). */
    public int trieNodes() {
        return nodes;
    }
}
