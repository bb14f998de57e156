package dev.edgelm.grammar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.EngineOptions;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * End to end on the tiny chat model (random weights): greedy and sampled generation under a schema ends by
 * itself with text that Jackson parses and networknt's validator accepts against the schema.
 */
class StructuredGenerationTest {
    private static final Path DIR = Path.of("src/test/resources/fixtures/qwen35/tiny-chat");
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private static Engine engine;
    private static Tokenizer tokenizer;
    private static Vocabulary vocab;

    @BeforeAll
    static void load() {
        engine = Engine.load(DIR, EngineOptions.defaults().withThreads(1));
        tokenizer = ChatFormat.load(DIR).tokenizer();
        vocab = Vocabulary.of(tokenizer, engine.config().vocabSize());
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    static final List<String> SCHEMAS_UNDER_TEST = List.of(
            """
            {"type":"object","properties":{"city":{"type":"string","maxLength":8},
             "population":{"type":"integer"},"capital":{"type":"boolean"}},
             "required":["city","population","capital"],"additionalProperties":false}""",
            """
            {"type":"object","properties":{"answer":{"enum":["yes","no",null]},"score":{"type":"number"},
             "note":{"type":"string","minLength":1,"maxLength":5}},"required":["answer"]}""",
            """
            {"type":"array","items":{"type":"object","properties":{"k":{"const":"v"},"n":{"type":["integer","null"]}},
             "required":["k"]},"minItems":1,"maxItems":3}""",
            """
            {"$defs":{"point":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},
             "required":["x","y"]}},"type":"object","properties":{"shape":{"anyOf":[
             {"type":"object","properties":{"circle":{"$ref":"#/$defs/point"}},"required":["circle"]},
             {"type":"object","properties":{"line":{"type":"array","items":{"$ref":"#/$defs/point"},"minItems":2,"maxItems":2}},"required":["line"]}]}},
             "required":["shape"]}""",
            """
            {"oneOf":[{"type":"boolean"},{"type":"string","maxLength":4},{"type":"null"}]}""");

    private static String generate(TokenConstraintFactoryHolder f, GenerationOptions.Builder opts) {
        Session s = engine.newSession();
        s.prefill(tokenizer.encode("Answer in JSON: the capital of France."));
        GenerationResult r = s.generate(opts.constraint(f.factory()).maxNewTokens(300).build());
        assertEquals(StopReason.STOP_TOKEN, r.reason(), "generation ends by itself at a stop token");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int t : r.tokens()) {
            out.writeBytes(tokenizer.bytes(t));
        }
        String text = out.toString(StandardCharsets.UTF_8);
        if (text.contains("\uFFFD")) {
            StringBuilder sb = new StringBuilder();
            for (int t : r.tokens()) {
                sb.append(t).append(':').append(java.util.HexFormat.of().formatHex(tokenizer.bytes(t))).append(' ');
            }
            throw new AssertionError("not UTF-8: " + sb);
        }
        return text;
    }

    private record TokenConstraintFactoryHolder(dev.edgelm.engine.TokenConstraint.Factory factory) {}

    @Test
    void greedyAndSampledOutputsParseAndValidate() throws Exception {
        for (String schema : SCHEMAS_UNDER_TEST) {
            Schema validator = SCHEMAS.getSchema(schema, InputFormat.JSON);
            TokenConstraintFactoryHolder f = new TokenConstraintFactoryHolder(
                    GrammarConstraint.factory(JsonSchemaGrammar.fromSchema(schema), vocab));
            for (int run = 0; run < 4; run++) {
                GenerationOptions.Builder o = engine.defaultGenerationOptions();
                if (run == 0) {
                    o.temperature(0f);
                } else {
                    o.temperature(1f).topK(0).topP(1f).minP(0f).seed(run * 7919L);
                }
                String text = generate(f, o);
                JsonNode node = JSON.readTree(text); // throws if it does not parse
                List<Error> errors = validator.validate(text, InputFormat.JSON);
                assertTrue(errors.isEmpty(), "schema " + schema + "\noutput " + text + "\nerrors " + errors);
                assertTrue(node != null);
            }
        }
    }

    /**
     * json_object: keys and strings are unbounded, so a random model need not finish within the limit;
     * whatever it wrote is a prefix of an object, and when it stopped, a whole object.
     */
    @Test
    void jsonObjectOutputIsAnObjectWhenItStops() throws Exception {
        dev.edgelm.engine.TokenConstraint.Factory f = GrammarConstraint.factory(JsonSchemaGrammar.anyObject(), vocab);
        for (int run = 0; run < 3; run++) {
            Session s = engine.newSession();
            s.prefill(tokenizer.encode("JSON please"));
            GenerationResult r = s.generate(engine.defaultGenerationOptions().temperature(1f).seed(run).constraint(f)
                    .maxNewTokens(120).build());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int t : r.tokens()) {
                out.writeBytes(tokenizer.bytes(t));
            }
            String text = out.toString(StandardCharsets.UTF_8);
            assertTrue(text.startsWith("{"), text);
            GrammarMatcher m = new GrammarMatcher(JsonSchemaGrammar.anyObject());
            assertTrue(m.accept(text), text);
            if (r.reason() == StopReason.STOP_TOKEN) {
                assertTrue(JSON.readTree(text).isObject(), text);
            }
        }
    }
}
