package dev.edgelm.grammar;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A grammar flattened for the matcher, as llama.cpp lays it out: every alternative of every rule is a run
 * of symbols in one array, ended by {@link #END}; a symbol is a character class (index {@code >= 0}) or a
 * rule reference ({@code -2 - rule}). Repetitions become helper rules ({@code x*} = {@code R ::= x R | ""},
 * {@code x{0,n}} nested optionals), groups and alternations inside a sequence become rules too. Left
 * recursion (which a top-down matcher cannot run) is refused when the grammar is built.
 */
final class CompiledGrammar {
    static final int END = -1;
    /**
     * Symbols that repetitions may unroll to, in all ({@code x{m,n}} unrolls to m + 2(n - m)): a grammar of a
     * few bytes such as {@code "a"{0,999999} "b"{0,999999}} is refused at once instead of compiled for minutes.
     */
    static final long MAX_UNROLLED = 4_194_304;

    final int[] code;
    final Expr.CharClass[] classes;
    /** Start positions in {@link #code} of each rule's alternatives. */
    final int[][] ruleAlts;
    final String[] ruleNames;
    final int root;

    private final List<Expr.CharClass> classList = new ArrayList<>();
    private final Map<Expr.CharClass, Integer> classIds = new HashMap<>();
    private final Map<String, Integer> ruleIds = new HashMap<>();
    private final List<String> names = new ArrayList<>();
    private final List<List<int[]>> bodies = new ArrayList<>();
    private int generated;
    private long unrolled;
    private final Map<String, String> origin = new HashMap<>();

    CompiledGrammar(Grammar grammar) {
        for (Map.Entry<String, Expr> e : grammar.rules().entrySet()) { // before anything is unrolled
            unrolled += unrolledSize(e.getValue());
            if (unrolled > MAX_UNROLLED) {
                throw new EdgeLmException("grammar: repetitions in rule '" + e.getKey() + "' unroll past "
                        + MAX_UNROLLED + " symbols in all; use smaller bounds");
            }
        }
        for (String name : grammar.rules().keySet()) {
            ruleId(name);
        }
        for (Map.Entry<String, Expr> e : grammar.rules().entrySet()) {
            bodies.set(ruleIds.get(e.getKey()), alternatives(e.getKey(), e.getValue()));
        }
        classes = classList.toArray(new Expr.CharClass[0]);
        ruleNames = names.toArray(new String[0]);
        ruleAlts = new int[bodies.size()][];
        List<Integer> flat = new ArrayList<>();
        for (int r = 0; r < bodies.size(); r++) {
            List<int[]> alts = bodies.get(r);
            ruleAlts[r] = new int[alts.size()];
            for (int a = 0; a < alts.size(); a++) {
                ruleAlts[r][a] = flat.size();
                for (int s : alts.get(a)) {
                    flat.add(s);
                }
                flat.add(END);
            }
        }
        code = flat.stream().mapToInt(Integer::intValue).toArray();
        root = ruleIds.get(Grammar.ROOT);
        checkLeftRecursion();
    }

    /** Symbols the repetitions of {@code e} unroll to (a repetition's body is compiled once, as a rule). */
    private static long unrolledSize(Expr e) {
        return switch (e) {
            case Expr.Seq s -> s.parts().stream().mapToLong(CompiledGrammar::unrolledSize).sum();
            case Expr.Alt a -> a.options().stream().mapToLong(CompiledGrammar::unrolledSize).sum();
            case Expr.Repeat r -> r.min() + (r.max() < 0 ? 2L : 2L * (r.max() - r.min())) + unrolledSize(r.body());
            default -> 0;
        };
    }

    private int ruleId(String name) {
        Integer id = ruleIds.get(name);
        if (id == null) {
            id = names.size();
            ruleIds.put(name, id);
            names.add(name);
            bodies.add(null);
        }
        return id;
    }

    private int newRule(String base, List<int[]> alts) {
        String name;
        do {
            name = base + "-" + (++generated);
        } while (ruleIds.containsKey(name));
        origin.put(name, origin.getOrDefault(base, base));
        int id = ruleId(name);
        bodies.set(id, alts);
        return id;
    }

    private int classId(Expr.CharClass c) {
        return classIds.computeIfAbsent(c, k -> {
            classList.add(k);
            return classList.size() - 1;
        });
    }

    private List<int[]> alternatives(String rule, Expr e) {
        List<int[]> out = new ArrayList<>();
        if (e instanceof Expr.Alt a) {
            for (Expr o : a.options()) {
                out.add(sequence(rule, o));
            }
        } else {
            out.add(sequence(rule, e));
        }
        return out;
    }

    private int[] sequence(String rule, Expr e) {
        List<Integer> out = new ArrayList<>();
        append(rule, e, out);
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private void append(String rule, Expr e, List<Integer> out) {
        switch (e) {
            case Expr.Literal l -> l.text().codePoints().forEach(cp -> out.add(classId(Expr.CharClass.of(cp, cp))));
            case Expr.CharClass c -> out.add(classId(c));
            case Expr.Ref r -> {
                Integer id = ruleIds.get(r.name());
                if (id == null) {
                    throw new EdgeLmException("grammar: rule '" + r.name() + "' is used but not defined");
                }
                out.add(-2 - id);
            }
            case Expr.Seq s -> s.parts().forEach(p -> append(rule, p, out));
            case Expr.Alt a -> out.add(-2 - newRule(rule, alternatives(rule, a)));
            case Expr.Repeat r -> repeat(rule, r, out);
        }
    }

    /** One symbol standing for {@code e}: itself when it is one, else a helper rule. */
    private int symbol(String rule, Expr e) {
        int[] seq = e instanceof Expr.Alt ? null : sequence(rule, e);
        if (seq != null && seq.length == 1) {
            return seq[0];
        }
        return -2 - newRule(rule, seq == null ? alternatives(rule, e) : List.of(seq));
    }

    private void repeat(String rule, Expr.Repeat r, List<Integer> out) {
        if (r.max() == 0) {
            return;
        }
        int x = symbol(rule, r.body());
        for (int i = 0; i < r.min(); i++) {
            out.add(x);
        }
        if (r.max() < 0) { // R ::= x R | ""
            int id = ruleId(uniqueName(rule));
            bodies.set(id, List.of(new int[] {x, -2 - id}, new int[0]));
            out.add(-2 - id);
            return;
        }
        int optional = r.max() - r.min();
        if (optional == 0) {
            return;
        }
        // O1 ::= x | "" ; Ok ::= x O(k-1) | ""
        int inner = newRule(rule, List.of(new int[] {x}, new int[0]));
        for (int k = 2; k <= optional; k++) {
            inner = newRule(rule, List.of(new int[] {x, -2 - inner}, new int[0]));
        }
        out.add(-2 - inner);
    }

    private String uniqueName(String base) {
        String name;
        do {
            name = base + "-" + (++generated);
        } while (ruleIds.containsKey(name));
        origin.put(name, origin.getOrDefault(base, base));
        return name;
    }

    private void checkLeftRecursion() {
        int n = ruleAlts.length;
        boolean[] nullable = new boolean[n];
        for (boolean changed = true; changed; ) {
            changed = false;
            for (int r = 0; r < n; r++) {
                if (nullable[r]) {
                    continue;
                }
                for (int start : ruleAlts[r]) {
                    boolean all = true;
                    for (int p = start; code[p] != END && all; p++) {
                        all = code[p] < -1 && nullable[-2 - code[p]];
                    }
                    if (all) {
                        nullable[r] = true;
                        changed = true;
                        break;
                    }
                }
            }
        }
        // Depth first over "may start with" edges, with its own stack (a chain of a hundred thousand rules must
        // not overflow the thread's): 0 = unvisited, 1 = on the path, 2 = done.
        int[] mark = new int[n];
        int[] pathRule = new int[n];
        int[] pathAlt = new int[n];
        int[] pathPos = new int[n]; // position in the current alternative, -1 before its start
        for (int r0 = 0; r0 < n; r0++) {
            if (mark[r0] != 0) {
                continue;
            }
            int top = 0;
            pathRule[0] = r0;
            pathAlt[0] = 0;
            pathPos[0] = -1;
            mark[r0] = 1;
            top = 1;
            while (top > 0) {
                int i = top - 1;
                int r = pathRule[i];
                if (pathAlt[i] >= ruleAlts[r].length) {
                    mark[r] = 2;
                    top--;
                    continue;
                }
                int p = pathPos[i] < 0 ? ruleAlts[r][pathAlt[i]] : pathPos[i];
                if (code[p] >= -1) { // a character or the end: this alternative starts no further rule
                    pathAlt[i]++;
                    pathPos[i] = -1;
                    continue;
                }
                int q = -2 - code[p];
                if (nullable[q]) {
                    pathPos[i] = p + 1;
                } else {
                    pathAlt[i]++;
                    pathPos[i] = -1;
                }
                if (mark[q] == 1) {
                    throw new EdgeLmException("grammar: rule '" + displayName(q) + "' is left-recursive");
                }
                if (mark[q] == 0) {
                    mark[q] = 1;
                    pathRule[top] = q;
                    pathAlt[top] = 0;
                    pathPos[top] = -1;
                    top++;
                }
            }
        }
    }

    /** The rule a helper rule was made for ({@code root-3} -> {@code root}). */
    private String displayName(int r) {
        String name = ruleNames[r];
        return origin.getOrDefault(name, name);
    }
}
