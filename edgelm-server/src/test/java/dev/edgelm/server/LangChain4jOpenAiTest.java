package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.edgelm.chat.TinyChat;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.model.output.FinishReason;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's OpenAI client ({@code langchain4j-open-ai}'s {@link OpenAiChatModel} and
 * {@link OpenAiStreamingChatModel}) against {@code edgelm serve} on loopback with the tiny chat model: chat and
 * streaming (greedy replies equal to the fixture's transformers golden), a tool round, a JSON schema.
 */
class LangChain4jOpenAiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;
    private static OpenAiChatModel chat;

    @BeforeAll
    static void start() {
        server = new TestServer(2, 8);
        chat = OpenAiChatModel.builder().baseUrl(server.base + "/v1").apiKey("unused").modelName(TestServer.MODEL_ID)
                .temperature(0.0).maxTokens(24).maxRetries(0)
                .supportedCapabilities(Capability.RESPONSE_FORMAT_JSON_SCHEMA).strictJsonSchema(true).build();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static ChatRequest turn1() {
        return ChatRequest.builder().messages(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1)).build();
    }

    @Test
    void chatMatchesTheTransformersGolden() {
        ChatResponse r = chat.chat(turn1());
        assertEquals(TinyChat.text("turn1_reply"), r.aiMessage().text());
        assertEquals(FinishReason.STOP, r.finishReason());
        assertEquals(TinyChat.ids("turn1_prompt_ids").length, r.tokenUsage().inputTokenCount());
        assertEquals(TinyChat.replyIds("turn1").length, r.tokenUsage().outputTokenCount());
        assertEquals(TestServer.MODEL_ID, r.metadata().modelName());
        assertTrue(r.metadata().id().startsWith("chatcmpl-"), r.metadata().id());
    }

    @Test
    void streamingConcatenatesToTheGolden() throws Exception {
        OpenAiStreamingChatModel streaming = OpenAiStreamingChatModel.builder().baseUrl(server.base + "/v1").apiKey("unused")
                .modelName(TestServer.MODEL_ID).temperature(0.0).maxTokens(24).build();
        StringBuilder partials = new StringBuilder();
        int[] count = {0};
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streaming.chat(turn1(), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                partials.append(partial);
                count[0]++;
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse r = done.get(60, TimeUnit.SECONDS);
        assertEquals(TinyChat.text("turn1_reply"), r.aiMessage().text());
        assertEquals(r.aiMessage().text(), partials.toString());
        assertTrue(count[0] > 1, "in pieces: " + count[0]);
        assertEquals(FinishReason.STOP, r.finishReason());
    }

    @Test
    void aToolRound() throws Exception {
        ToolSpecification weather = ToolSpecification.builder().name("weather").description("The weather of a city")
                .parameters(JsonObjectSchema.builder().addStringProperty("city").required("city").build()).build();
        UserMessage question = UserMessage.from("What is the weather in Paris?");
        ChatResponse first = chat.chat(ChatRequest.builder().messages(question)
                .parameters(ChatRequestParameters.builder().toolSpecifications(weather).toolChoice(ToolChoice.REQUIRED).build()).build());
        AiMessage call = first.aiMessage();
        assertEquals(1, call.toolExecutionRequests().size());
        ToolExecutionRequest request = call.toolExecutionRequests().getFirst();
        assertEquals("weather", request.name());
        assertTrue(request.id().startsWith("call_"), request.id());
        assertTrue(JSON.readTree(request.arguments()).isObject(), request.arguments());

        ChatResponse second = chat.chat(ChatRequest.builder()
                .messages(question, call, ToolExecutionResultMessage.from(request, "sunny, 21 degrees"))
                .parameters(ChatRequestParameters.builder().toolSpecifications(weather).build()).build());
        assertFalse(second.aiMessage().hasToolExecutionRequests());
        assertTrue(second.finishReason() == FinishReason.STOP || second.finishReason() == FinishReason.LENGTH);
        // the history (the call and its result, rendered by the stock template) is longer than the question alone
        assertTrue(second.tokenUsage().inputTokenCount() > first.tokenUsage().inputTokenCount());
    }

    @Test
    void aJsonSchemaReplyValidates() {
        ResponseFormat format = ResponseFormat.builder().type(ResponseFormatType.JSON).jsonSchema(JsonSchema.builder().name("answer")
                .rootElement(JsonObjectSchema.builder().addEnumProperty("answer", List.of("yes", "no")).addBooleanProperty("sure")
                        .required("answer", "sure").build()).build()).build();
        ChatResponse r = chat.chat(ChatRequest.builder().messages(UserMessage.from("Is it raining?"))
                .parameters(ChatRequestParameters.builder().responseFormat(format).maxOutputTokens(256).build()).build());
        Schema schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(
                "{\"type\":\"object\",\"properties\":{\"answer\":{\"enum\":[\"yes\",\"no\"]},\"sure\":{\"type\":\"boolean\"}},"
                        + "\"required\":[\"answer\",\"sure\"],\"additionalProperties\":false}", InputFormat.JSON);
        List<Error> errors = schema.validate(r.aiMessage().text(), InputFormat.JSON);
        assertTrue(errors.isEmpty(), r.aiMessage().text() + " -> " + errors);
        assertEquals(FinishReason.STOP, r.finishReason());
    }
}
