package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonObject;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.edgelm.chat.TinyChat;
import dev.edgelm.format.npy.Npy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI Java SDK against {@code edgelm serve} on loopback, with the tiny-chat model. Greedy replies
 * are compared with the fixture's goldens (Hugging Face transformers' greedy generation of the same
 * conversation), so the server path (template, tokenizer, engine, text pipeline) is checked end to end.
 */
class OpenAiSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;
    private static OpenAIClient client;

    @BeforeAll
    static void start() {
        server = new TestServer(2, 8);
        client = OpenAIOkHttpClient.builder().baseUrl(server.base + "/v1").apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    private static ChatCompletionCreateParams.Builder turn1() {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addSystemMessage(TinyChat.SYSTEM).addUserMessage(TinyChat.TURN1)
                .temperature(0.0).maxCompletionTokens(24);
    }

    @Test
    void greedyChatMatchesTheTransformersGolden() {
        ChatCompletion r = client.chat().completions().create(turn1().build());
        assertTrue(r.id().startsWith("chatcmpl-"));
        assertEquals(TestServer.MODEL_ID, r.model());
        ChatCompletion.Choice c = r.choices().getFirst();
        assertEquals(TinyChat.text("turn1_reply"), c.message().content().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, c.finishReason()); // the golden ends with <|im_end|>
        assertEquals(TinyChat.ids("turn1_prompt_ids").length, r.usage().orElseThrow().promptTokens());
        assertEquals(TinyChat.replyIds("turn1").length, r.usage().orElseThrow().completionTokens());
    }

    @Test
    void secondTurnReusesTheFirstTurnsStateAndMatchesItsGolden() {
        client.chat().completions().create(turn1().build());
        ChatCompletion r = client.chat().completions().create(turn1()
                .addAssistantMessage(TinyChat.text("turn1_reply")).addUserMessage(TinyChat.TURN2).build());
        assertEquals(TinyChat.text("turn2_reply"), r.choices().getFirst().message().content().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, r.choices().getFirst().finishReason());
        assertEquals(TinyChat.ids("turn2_prompt_ids").length, r.usage().orElseThrow().promptTokens());
        // turn 2 shares turn 1's render up to the reply (the fixture's README: 38 tokens, through turn 1's
        // <|im_start|>assistant\n); the first turn left a snapshot exactly there, so all of it is reused
        long cached = r.usage().orElseThrow().promptTokensDetails().orElseThrow().cachedTokens().orElseThrow();
        assertEquals(TinyChat.SHARED_TURN1_TURN2, cached);
    }

    @Test
    void streamingFollowsLlamaServersChunkSequence() {
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(
                turn1().streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            s.stream().forEach(chunks::add);
        }
        ChatCompletionChunk first = chunks.getFirst();
        assertEquals(ChatCompletionChunk.Choice.Delta.Role.ASSISTANT, first.choices().getFirst().delta().role().orElseThrow());
        assertTrue(first.choices().getFirst().delta().content().isEmpty());
        Set<String> ids = new HashSet<>();
        StringBuilder text = new StringBuilder();
        int finishChunks = 0;
        for (int i = 0; i < chunks.size(); i++) {
            ChatCompletionChunk c = chunks.get(i);
            ids.add(c.id());
            assertEquals("chat.completion.chunk", c._object_().asString().orElseThrow());
            if (c.choices().isEmpty()) {
                assertEquals(chunks.size() - 1, i, "the usage chunk comes last");
                continue;
            }
            ChatCompletionChunk.Choice ch = c.choices().getFirst();
            if (i > 0) {
                assertTrue(ch.delta().role().isEmpty(), "role only in the first chunk");
            }
            ch.delta().content().ifPresent(text::append);
            if (ch.finishReason().isPresent()) {
                finishChunks++;
                assertEquals(ChatCompletionChunk.Choice.FinishReason.STOP, ch.finishReason().get());
                assertTrue(ch.delta().content().isEmpty());
                assertEquals(chunks.size() - 2, i, "the finish chunk is followed only by the usage chunk");
            }
        }
        assertEquals(1, ids.size());
        assertEquals(1, finishChunks);
        assertEquals(TinyChat.text("turn1_reply"), text.toString());
        assertEquals(TinyChat.replyIds("turn1").length, chunks.getLast().usage().orElseThrow().completionTokens());
    }

    @Test
    void logprobsAreTheModelsLogSoftmax() {
        ChatCompletion r = client.chat().completions().create(turn1().logprobs(true).topLogprobs(3).build());
        List<ChatCompletionTokenLogprob> lps = r.choices().getFirst().logprobs().orElseThrow().content().orElseThrow();
        int[] reply = TinyChat.replyIds("turn1");
        assertEquals(reply.length, lps.size());
        // the first token's log-probability from the golden logits of the prompt's last position
        Npy.Array logits = Npy.read(TinyChat.DIR.resolve("golden/turn1_logits.npy"));
        float[] all = logits.floats();
        int vocab = 8320;
        int off = (TinyChat.ids("turn1_prompt_ids").length - 1) * vocab;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            max = Math.max(max, all[off + i]);
        }
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(all[off + i] - max);
        }
        double expected = all[off + reply[0]] - max - Math.log(sum);
        ChatCompletionTokenLogprob first = lps.getFirst();
        assertEquals(expected, first.logprob(), 2e-3);
        assertEquals(3, first.topLogprobs().size());
        assertEquals(first.logprob(), first.topLogprobs().getFirst().logprob(), 1e-6, "greedy: the token is the most likely");
        StringBuilder joined = new StringBuilder();
        for (ChatCompletionTokenLogprob lp : lps) {
            assertTrue(lp.logprob() <= 0);
            assertTrue(lp.bytes().isPresent());
            joined.append(lp.token());
        }
        assertEquals(TinyChat.text("turn1_reply"), joined.toString());
    }

    private static ChatCompletionFunctionTool weatherTool() {
        return ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder().name("get_weather")
                .description("Weather of a city").parameters(FunctionParameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
                        .putAdditionalProperty("required", JsonValue.from(List.of("city"))).build()).build()).build();
    }

    @Test
    void aToolCallRoundTripRendersThroughTheStockTemplate() throws Exception {
        ChatCompletionMessageFunctionToolCall call = ChatCompletionMessageFunctionToolCall.builder().id("call_1")
                .function(ChatCompletionMessageFunctionToolCall.Function.builder().name("get_weather")
                        .arguments("{\"city\": \"Paris\"}").build()).build();
        ChatCompletionCreateParams p = ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addUserMessage("Weather in Paris?")
                .addMessage(ChatCompletionAssistantMessageParam.builder().addToolCall(call).build())
                .addMessage(ChatCompletionToolMessageParam.builder().toolCallId("call_1").content("sunny, 21 C").build())
                .addTool(weatherTool()).temperature(0.0).maxCompletionTokens(8).build();
        ChatCompletion r = client.chat().completions().create(p);
        assertFalse(r.choices().isEmpty());
        assertNotNull(r.choices().getFirst().finishReason());

        // the same history through /apply-template: the call as the template writes it, the result in a user turn
        String body = JSON.writeValueAsString(Map.of("messages", List.of(
                Map.of("role", "user", "content", "Weather in Paris?"),
                Map.of("role", "assistant", "content", "", "tool_calls", List.of(Map.of("id", "call_1", "type", "function",
                        "function", Map.of("name", "get_weather", "arguments", "{\"city\": \"Paris\"}")))),
                Map.of("role", "tool", "tool_call_id", "call_1", "content", "sunny, 21 C"))));
        JsonNode t = JSON.readTree(server.post("/apply-template", body).body());
        String prompt = t.get("prompt").asText();
        assertTrue(prompt.contains("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
                + "</parameter>\n</function>\n</tool_call><|im_end|>\n"), prompt);
        assertTrue(prompt.contains("<|im_start|>user\n<tool_response>\nsunny, 21 C\n</tool_response><|im_end|>\n"), prompt);
    }

    @Test
    void aNamedToolChoiceComesBackAsAToolCall() throws Exception {
        ChatCompletion r = client.chat().completions().create(ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addUserMessage("Weather in Paris?").addTool(weatherTool())
                .toolChoice(ChatCompletionNamedToolChoice.builder().function(ChatCompletionNamedToolChoice.Function.builder()
                        .name("get_weather").build()).build())
                .temperature(0.0).maxCompletionTokens(12).build());
        var calls = r.choices().getFirst().message().toolCalls().orElseThrow();
        assertEquals(1, calls.size());
        ChatCompletionMessageFunctionToolCall fc = calls.getFirst().asFunction();
        assertEquals("get_weather", fc.function().name());
        assertTrue(fc.id().startsWith("call_"));
        assertTrue(JSON.readTree(fc.function().arguments()).isObject(), fc.function().arguments());
    }

    @Test
    void jsonObjectResponseFormatGivesJson() throws Exception {
        ChatCompletion r = client.chat().completions().create(ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addUserMessage("Give me a JSON object.").responseFormat(ResponseFormatJsonObject.builder().build())
                .temperature(0.0).maxCompletionTokens(400).build());
        String content = r.choices().getFirst().message().content().orElseThrow();
        assertTrue(content.strip().startsWith("{"), content);
        if (r.choices().getFirst().finishReason() == ChatCompletion.Choice.FinishReason.STOP) {
            assertTrue(JSON.readTree(content).isObject(), content);
        }
    }

    @Test
    void badRequestsAreOpenAiErrors() {
        BadRequestException e = assertThrows(BadRequestException.class, () -> client.chat().completions().create(
                ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID).messages(List.of()).build()));
        assertEquals(400, e.statusCode());
        assertTrue(e.getMessage().contains("messages"), e.getMessage());
        BadRequestException t = assertThrows(BadRequestException.class, () -> client.chat().completions().create(
                turn1().topP(7.0).build()));
        assertTrue(t.getMessage().contains("top_p"), t.getMessage());
    }

    @Test
    void aServerWithAKeyRefusesOthers() {
        try (TestServer keyed = new TestServer(1, 1, 256, ServerOptions.loopback(0).withApiKey("s3cret"))) {
            OpenAIClient wrong = OpenAIOkHttpClient.builder().baseUrl(keyed.base + "/v1").apiKey("nope").maxRetries(0).build();
            OpenAIClient right = OpenAIOkHttpClient.builder().baseUrl(keyed.base + "/v1").apiKey("s3cret").maxRetries(0).build();
            UnauthorizedException e = assertThrows(UnauthorizedException.class, () -> wrong.chat().completions().create(
                    turn1().maxCompletionTokens(2).build()));
            assertEquals(401, e.statusCode());
            ChatCompletion ok = right.chat().completions().create(turn1().maxCompletionTokens(2).build());
            assertInstanceOf(String.class, ok.id());
            wrong.close();
            right.close();
        }
    }
}
