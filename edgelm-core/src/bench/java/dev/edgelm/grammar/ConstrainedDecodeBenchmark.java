package dev.edgelm.grammar;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.Sampler;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a JSON-schema constraint in decoding, on a model file with a real-sized vocabulary (make one
 * with {@code edgelm synth --size 0.8b --quant int8 -o q08.gguf}: the stand-in tokenizer has Qwen3.5's
 * 248k ids). {@code decodeStep}: one greedy decode step (forward pass + sampling), with {@code constraint}
 * {@code none} or {@code schema} (mask, sample, accept); the sequence restarts from its prompt after 48
 * tokens or when the JSON is complete. {@code maskCold}: the first mask of a fresh constraint (trie walk
 * with an empty state cache) at the start, where only an opening brace may come; {@code maskColdInString}: the
 * same after the text <code>{"name": "</code>, where nearly every token is allowed (the trie walk visits the whole trie);
 * {@code maskWarm}, {@code maskWarmInString}: a mask of a state already met (one pass over the logits).
 * Give {@code -p constraint=schema} for the mask benchmarks (they ignore the parameter).
 * Run: {@code java -jar target/benchmarks.jar ConstrainedDecode -p model=q08.gguf}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xmx6g", "--add-modules=jdk.incubator.vector"})
public class ConstrainedDecodeBenchmark {
    static final String SCHEMA = """
            {"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
             "tags":{"type":"array","items":{"type":"string"}}},"required":["name","age","tags"]}""";

    @Param({""})
    public String model;

    @Param({"none", "schema"})
    public String constraint;

    private Engine engine;
    private Vocabulary vocab;
    private Grammar grammar;
    private GenerationOptions options;
    private Session session;
    private Session.Checkpoint start;
    private Sampler sampler;
    private float[] logits;
    private float[] promptLogits;
    private int produced;
    private GrammarConstraint warm;
    private GrammarConstraint warmInString;
    private int[] intoString;
    private float[] scratch;

    @Setup(Level.Trial)
    public void setup() {
        Path path = Path.of(model);
        engine = Engine.load(path, EngineOptions.defaults());
        Tokenizer tok = ChatFormat.load(path).tokenizer();
        vocab = Vocabulary.of(tok, engine.config().vocabSize());
        grammar = JsonSchemaGrammar.fromSchema(SCHEMA);
        GenerationOptions.Builder b = engine.defaultGenerationOptions().temperature(0f);
        if (constraint.equals("schema")) {
            b.constraint(GrammarConstraint.factory(grammar, vocab));
        }
        options = b.build();
        session = engine.newSession();
        promptLogits = session.prefill(tok.encode("Describe a person as JSON with a name, an age and tags."));
        start = session.checkpoint();
        restart();
        warm = new GrammarConstraint(grammar, vocab);
        scratch = new float[engine.config().vocabSize()];
        warm.mask(scratch);
        intoString = tok.encode("{\"name\": \"");
        warmInString = inString();
        warmInString.mask(scratch);
    }

    /** A fresh constraint fed <code>{"name": "</code>: inside a string, where nearly every token is allowed. */
    private GrammarConstraint inString() {
        GrammarConstraint c = new GrammarConstraint(grammar, vocab);
        for (int t : intoString) {
            c.accept(t);
        }
        return c;
    }

    private void restart() {
        session.rollback(start);
        sampler = new Sampler(options, engine.config().vocabSize(), 1);
        logits = promptLogits.clone();
        produced = 0;
    }

    @Benchmark
    public int decodeStep() {
        int t = sampler.sample(logits);
        if (isStop(t) || produced == 48) {
            restart();
            t = sampler.sample(logits);
        }
        sampler.accept(t);
        logits = session.decode(t);
        produced++;
        return t;
    }

    private boolean isStop(int t) {
        for (int s : options.stopTokenIds()) {
            if (s == t) {
                return true;
            }
        }
        return false;
    }

    @Benchmark
    public float maskCold() {
        GrammarConstraint c = new GrammarConstraint(grammar, vocab);
        c.mask(scratch);
        return scratch[0];
    }

    @Benchmark
    public float maskColdInString() {
        GrammarConstraint c = inString();
        c.mask(scratch);
        return scratch[0];
    }

    @Benchmark
    public float maskWarmInString() {
        warmInString.mask(scratch);
        return scratch[0];
    }

    @Benchmark
    public float maskWarm() {
        warm.mask(scratch);
        return scratch[0];
    }

    @TearDown(Level.Trial)
    public void close() {
        engine.close();
    }
}
