package dev.edgelm.grammar;

import dev.edgelm.util.EdgeLmException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * A context-free grammar over Unicode code points: named rules, one of them the start rule {@code root}
 * (llama.cpp's GBNF model). Build one from GBNF text ({@link #parse}), from a JSON schema
 * ({@link JsonSchemaGrammar}), or from rules; {@link #toString()} writes GBNF back (rules sorted by name, as
 * llama.cpp prints them).
 */
public final class Grammar {
    public static final String ROOT = "root";

    private final Map<String, Expr> rules;
    private final CompiledGrammar compiled;

    /** @throws EdgeLmException if {@code root} is missing, a rule refers to a rule that does not exist, or a rule is left-recursive */
    public Grammar(Map<String, Expr> rules) {
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(rules));
        if (!this.rules.containsKey(ROOT)) {
            throw new EdgeLmException("grammar has no 'root' rule");
        }
        this.compiled = new CompiledGrammar(this);
    }

    /** Parses GBNF text (llama.cpp's dialect; see docs/grammar.md). */
    public static Grammar parse(String gbnf) {
        return new Grammar(Gbnf.parse(gbnf));
    }

    public Map<String, Expr> rules() {
        return rules;
    }

    CompiledGrammar compiled() {
        return compiled;
    }

    /** GBNF text, one rule a line, sorted by name. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Expr> e : new TreeMap<>(rules).entrySet()) {
            sb.append(e.getKey()).append(" ::= ").append(Gbnf.write(e.getValue())).append('\n');
        }
        return sb.toString();
    }
}
