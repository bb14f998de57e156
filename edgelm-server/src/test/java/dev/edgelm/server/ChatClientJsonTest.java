package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.util.EdgeLmException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The client's JSON (jackson-core's streaming API, no ObjectMapper) reads and writes what an ObjectMapper does. */
class ChatClientJsonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String CHUNK = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764650000,"
            + "\"choices\":[{\"index\":0,\"finish_reason\":null,\"delta\":{\"content\":\"caf\\u00e9 \\\"x\\\"\\n\",\"tool_calls\":[]}}],"
            + "\"usage\":{\"prompt_tokens\":47,\"completion_tokens\":8,\"prompt_tokens_details\":{\"cached_tokens\":6}},"
            + "\"timings\":{\"prompt_ms\":812.25,\"first_token_ms\":1.5e3,\"big\":12345678901234567890,\"neg\":-3,\"ok\":true,\"no\":false}}";

    @Test
    void readsAChunkAsTheMapperDoes() throws Exception {
        JsonNode ours = ChatClient.read(CHUNK);
        assertEquals(MAPPER.readTree(CHUNK), MAPPER.readTree(MAPPER.writeValueAsString(ours)));
        assertEquals(1500.0, ours.path("timings").path("first_token_ms").asDouble());
        assertEquals(6, ours.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt());
        assertEquals("café \"x\"\n", ours.path("choices").path(0).path("delta").path("content").asText());
    }

    @Test
    void writesARequestTheMapperReadsBack() throws Exception {
        JsonNode request = MAPPER.readTree("{\"model\":\"m\",\"max_tokens\":8,\"temperature\":0.7,\"seed\":-1,"
                + "\"stop\":[\"a\",\"\\u0000\"],\"messages\":[{\"role\":\"user\",\"content\":\"Hi \\ud83d\\ude00\"}],"
                + "\"chat_template_kwargs\":{\"enable_thinking\":false},\"x\":null}");
        assertEquals(request, MAPPER.readTree(ChatClient.write(request)));
    }

    /** A float option goes out as the decimal the user typed (its shortest decimal), not widened to a double's digits. */
    @Test
    void floatsGoOutAsTheirShortestDecimal() {
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("temperature", 0.7f).put("top_p", 0.95f)
                .put("min_p", 1e-5f).put("repeat_penalty", 1.1).put("frequency_penalty", -0.3f);
        assertEquals("{\"temperature\":0.7,\"top_p\":0.95,\"min_p\":1.0E-5,\"repeat_penalty\":1.1,\"frequency_penalty\":-0.3}",
                new String(ChatClient.write(body), StandardCharsets.UTF_8));
    }

    @Test
    void aNonFiniteNumberIsRefusedNotThrownAsAJacksonError() {
        for (float f : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
            ObjectNode body = JsonNodeFactory.instance.objectNode().put("temperature", f);
            EdgeLmException e = assertThrows(EdgeLmException.class, () -> ChatClient.write(body));
            assertTrue(e.getMessage().contains("not a finite number"), e.getMessage());
        }
    }
}
