package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code response_format: json_schema} over HTTP: the reply of the tiny chat model (random weights) is enforced by the
 * schema's grammar, so it parses and validates against the schema (checked by an independent JSON-schema validator).
 */
class JsonSchemaOverHttpTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"answer\":{\"enum\":[\"yes\",\"no\"]},"
            + "\"sure\":{\"type\":\"boolean\"},\"unit\":{\"const\":\"cm\"}},\"required\":[\"answer\",\"sure\",\"unit\"],"
            + "\"additionalProperties\":false}";
    private static TestServer server;

    @BeforeAll
    static void start() {
        server = new TestServer(1, 4);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String request(String responseFormat, long seed) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"Is it raining?\"}],\"max_tokens\":512,\"seed\":" + seed
                + ",\"temperature\":" + (seed == 0 ? 0 : 1) + ",\"response_format\":" + responseFormat + "}";
    }

    @Test
    void repliesValidateAgainstTheSchema() throws Exception {
        Schema validator = SCHEMAS.getSchema(SCHEMA, InputFormat.JSON);
        for (long seed : new long[] {0, 1, 2}) {
            HttpResponse<String> r = server.post("/v1/chat/completions",
                    request("{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"schema\":" + SCHEMA + "}}", seed));
            assertEquals(200, r.statusCode(), r.body());
            JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
            assertEquals("stop", choice.get("finish_reason").asText(), r.body());
            String content = choice.get("message").get("content").asText();
            List<Error> errors = validator.validate(content, InputFormat.JSON);
            assertTrue(errors.isEmpty(), "seed " + seed + ": " + content + " -> " + errors);
        }
    }

    @Test
    void anUnsupportedKeywordIsA400NamingIt() throws Exception {
        HttpResponse<String> r = server.post("/v1/chat/completions", request("{\"type\":\"json_schema\",\"json_schema\":"
                + "{\"schema\":{\"type\":\"string\",\"pattern\":\"^a+$\"}}}", 0));
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals("response_format.json_schema.schema", e.get("param").asText(), r.body());
        assertTrue(e.get("message").asText().contains("pattern"), r.body());
    }

    @Test
    void aSchemaOverTheCompileBudgetIsA400NamingTheKeyword() throws Exception {
        StringBuilder props = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            props.append(i > 0 ? "," : "").append("\"p").append(i).append("\":{\"type\":\"string\",\"maxLength\":100000}");
        }
        HttpResponse<String> r = server.post("/v1/chat/completions", request("{\"type\":\"json_schema\",\"json_schema\":"
                + "{\"schema\":{\"type\":\"object\",\"properties\":{" + props + "}}}}", 0));
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals("response_format.json_schema.schema", e.get("param").asText(), r.body());
        assertTrue(e.get("message").asText().contains("#/properties/p1/maxLength"), r.body());
    }
}
