package dev.edgelm.grammar;

import dev.edgelm.util.EdgeLmException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A byte-level pushdown matcher of a {@link Grammar} (llama.cpp's design): the parse is a set of stacks of
 * grammar positions; a code point advances every stack whose top character class matches it, expanding rule
 * references until each stack's top is a character class again (or the stack is empty: the text so far is a
 * complete sentence). Bytes are decoded as UTF-8 on the way; a state in the middle of a character survives
 * only if some stack could still match a code point that starts with those bytes.
 *
 * <p>Stacks are linked frames shared by all stacks and interned, and so are the states (a stack set and
 * a partial character), so equal states are the same object: a state remembers where each byte leads and
 * the token mask computed from it. One matcher follows one text; it is not thread-safe.
 */
public final class GrammarMatcher {
    /** States kept before the memory is dropped and rebuilt (each holds at most a 256-entry table and a mask). */
    static final int MAX_STATES = 100_000;
    /** Stacks one state may hold before the grammar is called too ambiguous. */
    static final int MAX_STACKS = 8192;
    /**
     * Parse steps (a stack advanced or expanded) one token's mask or one accepted text may take: with
     * {@link #MAX_STACKS} this bounds the work of a step on a grammar that is ambiguous on purpose (alternatives
     * that stay open side by side, nested). Ordinary JSON-schema grammars take a few thousand.
     */
    static final long MAX_WORK = 200_000_000;

    static final class Frame {
        final int pos;
        final Frame parent;
        final int id;

        Frame(int pos, Frame parent, int id) {
            this.pos = pos;
            this.parent = parent;
            this.id = id;
        }
    }

    static final class State {
        final Frame[] stacks; // sorted by id
        final int partial; // code point bits read so far of a multi-byte character
        final int need; // continuation bytes still to come (0: between characters)
        final int len; // length of the character being read
        final boolean accepting;
        final int hash;
        State[] next;
        long[] mask;

        State(Frame[] stacks, int partial, int need, int len) {
            this.stacks = stacks;
            this.partial = partial;
            this.need = need;
            this.len = len;
            boolean acc = false;
            int h = partial * 31 + need * 7 + len;
            for (Frame f : stacks) {
                acc |= f == ACCEPT;
                h = h * 31 + f.id;
            }
            this.accepting = acc && need == 0;
            this.hash = h;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof State s && s.hash == hash && s.partial == partial && s.need == need && s.len == len
                    && Arrays.equals(s.stacks, stacks);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    static final Frame ACCEPT = new Frame(-1, null, 0);
    static final State DEAD = new State(new Frame[0], 0, 0, 0);

    private final CompiledGrammar g;
    private final Map<Long, Frame> frames = new HashMap<>();
    private final Map<State, State> states = new HashMap<>();
    private final List<State> masked = new ArrayList<>();
    private final Set<Long> visited = new HashSet<>();
    private final List<Frame> scratch = new ArrayList<>();
    private final IntList workPos = new IntList();
    private final List<Frame> workParent = new ArrayList<>();
    private int nextFrameId = 1;
    private long work;
    private State current;

    public GrammarMatcher(Grammar grammar) {
        this.g = grammar.compiled();
        this.current = initial();
    }

    private State initial() {
        visited.clear();
        scratch.clear();
        for (int start : g.ruleAlts[g.root]) {
            expand(start, null);
        }
        return intern(scratch, 0, 0, 0);
    }

    /** Feeds {@code text}'s bytes; false (and the matcher unchanged) if the grammar rejects them. */
    public boolean accept(byte[] text) {
        resetWork();
        State s = walk(current, text);
        if (s == DEAD) {
            return false;
        }
        current = s;
        return true;
    }

    public boolean accept(String text) {
        return accept(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether the bytes so far form a complete sentence of the grammar. */
    public boolean canStop() {
        return current.accepting;
    }

    /** Whether {@code text} is exactly a sentence of {@code grammar}. */
    public static boolean matches(Grammar grammar, String text) {
        GrammarMatcher m = new GrammarMatcher(grammar);
        return m.accept(text) && m.canStop();
    }

    State current() {
        return current;
    }

    void setCurrent(State s) {
        current = s;
    }

    State walk(State s, byte[] text) {
        for (int i = 0; i < text.length && s != DEAD; i++) {
            s = step(s, text[i]);
        }
        return s;
    }

    /** Drops the remembered states and masks when they grew past the cap (between steps only). */
    void trim() {
        if (states.size() > MAX_STATES) {
            states.clear();
            frames.clear();
            masked.clear();
            current = reintern(current);
        }
    }

    private State reintern(State s) {
        State copy = new State(s.stacks, s.partial, s.need, s.len);
        states.put(copy, copy);
        return copy;
    }

    /** Records that {@code s} now holds a mask; masks beyond {@code limit} are dropped, oldest first. */
    void rememberMask(State s, int limit) {
        masked.add(s);
        if (masked.size() > limit) {
            masked.removeFirst().mask = null;
        }
    }

    State step(State s, byte b) {
        int u = b & 0xFF;
        if (s.next != null) {
            State n = s.next[u];
            if (n != null) {
                return n;
            }
        }
        State n = computeStep(s, u);
        if (s.next == null) {
            s.next = new State[256];
        }
        s.next[u] = n;
        return n;
    }

    private State computeStep(State s, int u) {
        if (s.need > 0) {
            if ((u & 0xC0) != 0x80) {
                return DEAD;
            }
            int partial = (s.partial << 6) | (u & 0x3F);
            int need = s.need - 1;
            if (need > 0) {
                return partialState(s.stacks, partial, need, s.len);
            }
            int min = s.len == 2 ? 0x80 : s.len == 3 ? 0x800 : 0x10000;
            if (partial < min || partial > Character.MAX_CODE_POINT || (partial >= 0xD800 && partial <= 0xDFFF)) {
                return DEAD; // overlong, surrogate or out of range: not UTF-8
            }
            return advance(s.stacks, partial);
        }
        if (u < 0x80) {
            return advance(s.stacks, u);
        }
        if (u >= 0xC2 && u <= 0xDF) {
            return partialState(s.stacks, u & 0x1F, 1, 2);
        }
        if (u >= 0xE0 && u <= 0xEF) {
            return partialState(s.stacks, u & 0x0F, 2, 3);
        }
        if (u >= 0xF0 && u <= 0xF4) {
            return partialState(s.stacks, u & 0x07, 3, 4);
        }
        return DEAD;
    }

    private State partialState(Frame[] stacks, int partial, int need, int len) {
        // the code points this character may still become, kept to what UTF-8 of this length can encode
        // (no overlong forms, no surrogates): otherwise a token could lead into a character nothing completes
        int lo = Math.max(partial << (6 * need), len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000);
        int hi = Math.min((partial << (6 * need)) | ((1 << (6 * need)) - 1), len == 2 ? 0x7FF : len == 3 ? 0xFFFF : 0x10FFFF);
        if (lo >= 0xD800 && hi <= 0xDFFF || lo > hi) {
            return DEAD;
        }
        boolean viable = false;
        for (int i = 0; i < stacks.length && !viable; i++) {
            Frame f = stacks[i];
            viable = f != ACCEPT && g.classes[g.code[f.pos]].matchesSome(lo, hi);
        }
        if (!viable) {
            return DEAD;
        }
        State probe = new State(stacks, partial, need, len);
        State known = states.get(probe);
        if (known != null) {
            return known;
        }
        if (states.size() < 2 * MAX_STATES) {
            states.put(probe, probe);
        }
        return probe;
    }

    /** Starts a new budget of {@link #MAX_WORK} parse steps (before each mask and each accepted text). */
    void resetWork() {
        work = 0;
    }

    private void charge(int steps) {
        work += steps;
        if (work > MAX_WORK) {
            throw new EdgeLmException("grammar is too ambiguous to follow: one step took more than " + MAX_WORK
                    + " parse steps (" + MAX_STACKS + " parses at most side by side)");
        }
    }

    private State advance(Frame[] stacks, int cp) {
        charge(stacks.length);
        visited.clear();
        scratch.clear();
        for (Frame f : stacks) {
            if (f != ACCEPT && g.classes[g.code[f.pos]].matches(cp)) {
                expand(f.pos + 1, f.parent);
            }
        }
        if (scratch.isEmpty()) {
            return DEAD;
        }
        return intern(scratch, 0, 0, 0);
    }

    /**
     * Adds to {@link #scratch} every stack that continues at {@code pos} with {@code parent} below. Iterative,
     * with its own work list: a long chain of rules that match the empty string (a hundred thousand optional
     * properties, say) costs heap, never the thread's stack.
     */
    private void expand(int pos0, Frame parent0) {
        workPos.clear();
        workParent.clear();
        workPos.add(pos0);
        workParent.add(parent0);
        while (!workPos.isEmpty()) {
            int last = workPos.size() - 1;
            int pos = workPos.remove(last);
            Frame parent = workParent.remove(last);
            if (!visited.add(((long) (parent == null ? 0 : parent.id) << 32) | pos)) {
                continue;
            }
            charge(1);
            int sym = g.code[pos];
            if (sym == CompiledGrammar.END) {
                if (parent == null) {
                    scratch.add(ACCEPT);
                } else {
                    workPos.add(parent.pos);
                    workParent.add(parent.parent);
                }
            } else if (sym >= 0) {
                scratch.add(frame(pos, parent));
                if (scratch.size() > MAX_STACKS) {
                    throw new EdgeLmException("grammar is too ambiguous: more than " + MAX_STACKS + " parses at once");
                }
            } else {
                int rule = -2 - sym;
                Frame cont = g.code[pos + 1] == CompiledGrammar.END ? parent : frame(pos + 1, parent);
                int[] alts = g.ruleAlts[rule];
                for (int i = alts.length - 1; i >= 0; i--) { // reversed: popped in the rule's order
                    workPos.add(alts[i]);
                    workParent.add(cont);
                }
            }
        }
    }

    private Frame frame(int pos, Frame parent) {
        long key = ((long) (parent == null ? 0 : parent.id) << 32) | pos;
        Frame f = frames.get(key);
        if (f == null || f.parent != parent) {
            f = new Frame(pos, parent, nextFrameId++);
            frames.put(key, f);
        }
        return f;
    }

    private State intern(List<Frame> list, int partial, int need, int len) {
        Frame[] arr = list.toArray(new Frame[0]);
        Arrays.sort(arr, (a, b) -> Integer.compare(a.id, b.id));
        int n = 0;
        for (int i = 0; i < arr.length; i++) {
            if (n == 0 || arr[n - 1] != arr[i]) {
                arr[n++] = arr[i];
            }
        }
        if (n != arr.length) {
            arr = Arrays.copyOf(arr, n);
        }
        State probe = new State(arr, partial, need, len);
        State known = states.get(probe);
        if (known != null) {
            return known;
        }
        if (states.size() < 2 * MAX_STATES) {
            states.put(probe, probe);
        }
        return probe;
    }

    /** A growable int stack (the expansion's work list, without boxing). */
    private static final class IntList {
        private int[] a = new int[64];
        private int n;

        void add(int v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, 2 * n);
            }
            a[n++] = v;
        }

        int remove(int i) {
            n = i;
            return a[i];
        }

        int size() {
            return n;
        }

        boolean isEmpty() {
            return n == 0;
        }

        void clear() {
            n = 0;
        }
    }
}
