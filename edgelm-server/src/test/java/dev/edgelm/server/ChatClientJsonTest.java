package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
}
