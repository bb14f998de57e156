package dev.edgelm.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.listener.ChatModelRequestContext;
import dev.langchain4j.model.chat.listener.ChatModelResponseContext;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.chat.request.json.JsonSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.service.AiServices;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's {@link AiServices} over {@link EdgeLmChatModel}, in-process, on the tiny chat model (random weights:
 * the assertions are on the protocol and the state, not on wording): a full tool round and structured output.
 */
class AiServicesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    interface Assistant {
        String chat(String message);
    }

    static final class WeatherTools {
        final List<String> cities = new CopyOnWriteArrayList<>();

        @Tool("The current weather of a city")
        String weather(@P("the city") String city) {
            cities.add(String.valueOf(city));
            return "sunny, 21 degrees";
        }
    }

    /** Records what the chat model was asked and answered. */
    static final class Recorder implements ChatModelListener {
        final List<ChatRequest> requests = new CopyOnWriteArrayList<>();
        final List<ChatResponse> responses = new CopyOnWriteArrayList<>();

        @Override
        public void onRequest(ChatModelRequestContext context) {
            requests.add(context.chatRequest());
        }

        @Override
        public void onResponse(ChatModelResponseContext context) {
            responses.add(context.chatResponse());
        }
    }

    @Test
    void aToolRoundTrip() throws Exception {
        Recorder recorder = new Recorder();
        WeatherTools tools = new WeatherTools();
        try (EdgeLmChatModel model = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(24)
                .listeners(List.of(recorder)).build()) {
            Assistant assistant = AiServices.builder(Assistant.class).chatModel(model).tools(tools)
                    // random weights never ask for a tool by themselves: the first request requires one
                    .chatRequestTransformer(r -> r.messages().getLast() instanceof UserMessage
                            ? r.toBuilder().parameters(ChatRequestParameters.builder().overrideWith(r.parameters())
                                    .toolChoice(ToolChoice.REQUIRED).build()).build()
                            : r)
                    .build();

            dev.edgelm.engine.batch.BatchStats before = TinyChat.model().scheduler().stats();
            String answer = assistant.chat("What is the weather in Paris?");
            dev.edgelm.engine.batch.BatchStats after = TinyChat.model().scheduler().stats();

            assertEquals(2, recorder.requests.size(), "one request for the call, one for the answer");
            ChatRequest first = recorder.requests.getFirst();
            assertEquals("weather", first.toolSpecifications().getFirst().name());
            AiMessage call = recorder.responses.getFirst().aiMessage();
            assertEquals(1, call.toolExecutionRequests().size());
            ToolExecutionRequest request = call.toolExecutionRequests().getFirst();
            assertEquals("weather", request.name());
            assertTrue(request.id().startsWith("call_"), request.id());
            assertTrue(JSON.readTree(request.arguments()).isObject(), request.arguments());
            assertEquals(1, tools.cities.size(), "the tool ran once");

            // the tool's result went back to the model, after the call, matched by the call's id
            List<ChatMessage> second = recorder.requests.get(1).messages();
            AiMessage echoed = (AiMessage) second.get(second.size() - 2);
            assertEquals(request, echoed.toolExecutionRequests().getFirst());
            ToolExecutionResultMessage result = (ToolExecutionResultMessage) second.getLast();
            assertEquals(request.id(), result.id());
            assertEquals("weather", result.toolName());
            assertEquals("sunny, 21 degrees", result.text());

            ChatResponse last = recorder.responses.get(1);
            assertFalse(last.aiMessage().hasToolExecutionRequests());
            assertNotNull(last.aiMessage().text());
            assertEquals(last.aiMessage().text(), answer);
            assertTrue(last.finishReason() == FinishReason.STOP || last.finishReason() == FinishReason.LENGTH, String.valueOf(last.finishReason()));
            // the second prompt renders the history through the stock template: it holds the tool response
            assertTrue(last.tokenUsage().inputTokenCount() > recorder.responses.getFirst().tokenUsage().inputTokenCount());
            // and it started from the first one's state: the question was not prefilled again
            assertTrue(after.cacheHits() > before.cacheHits(), before + " -> " + after);
            assertTrue(after.tokensReused() > before.tokensReused(), before + " -> " + after);
        }
    }

    enum Sky { SUNNY, CLOUDY, RAINY }

    record Forecast(Sky sky, boolean wind, int temperature) {}

    interface Forecaster {
        Forecast forecast(String text);
    }

    @Test
    void structuredOutputThroughAiServicesParsesAndValidates() throws Exception {
        Recorder recorder = new Recorder();
        try (EdgeLmChatModel model = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(256)
                .listeners(List.of(recorder)).build()) {
            Forecast f = AiServices.create(Forecaster.class, model).forecast("Tomorrow in Oslo");

            ResponseFormat format = recorder.requests.getFirst().responseFormat();
            assertEquals(ResponseFormatType.JSON, format.type(), "the service asked for a JSON schema");
            // an independent check of the reply text: written here by hand from the record, checked by a validator library
            Schema schema = SCHEMAS.getSchema("{\"type\":\"object\",\"properties\":{\"sky\":{\"enum\":[\"SUNNY\",\"CLOUDY\",\"RAINY\"]},"
                    + "\"wind\":{\"type\":\"boolean\"},\"temperature\":{\"type\":\"integer\"}},\"additionalProperties\":false}", InputFormat.JSON);
            String text = recorder.responses.getFirst().aiMessage().text();
            List<Error> errors = schema.validate(text, InputFormat.JSON);
            assertTrue(errors.isEmpty(), text + " -> " + errors);
            assertEquals(FinishReason.STOP, recorder.responses.getFirst().finishReason());
            assertEquals(JSON.readValue(text, Forecast.class), f, "the service returned the reply's object");
        }
    }

    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"answer\":{\"enum\":[\"yes\",\"no\"]},"
            + "\"sure\":{\"type\":\"boolean\"},\"unit\":{\"const\":\"cm\"},\"sizes\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
            + "\"maxItems\":3}},\"required\":[\"answer\",\"sure\",\"unit\",\"sizes\"],\"additionalProperties\":false}";

    @Test
    void aRawJsonSchemaIsEnforcedForGreedyAndSampledReplies() {
        Schema validator = SCHEMAS.getSchema(SCHEMA, InputFormat.JSON);
        ResponseFormat format = ResponseFormat.builder().type(ResponseFormatType.JSON)
                .jsonSchema(JsonSchema.builder().name("answer").rootElement(JsonRawSchema.from(SCHEMA)).build()).build();
        try (EdgeLmChatModel model = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(512).build()) {
            for (long seed : new long[] {0, 1, 2}) {
                ChatResponse r = model.chat(ChatRequest.builder().messages(UserMessage.from("Is it raining?"))
                        .parameters(EdgeLmChatRequestParameters.builder().responseFormat(format).seed(seed)
                                .temperature(seed == 0 ? 0.0 : 1.0).build()).build());
                String text = r.aiMessage().text();
                List<Error> errors = validator.validate(text, InputFormat.JSON);
                assertTrue(errors.isEmpty(), "seed " + seed + ": " + text + " -> " + errors);
                assertEquals(FinishReason.STOP, r.finishReason(), text);
            }
        }
    }

    @Test
    void plainJsonModeGivesAJsonObject() throws Exception {
        try (EdgeLmChatModel model = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(512)
                .responseFormat(ResponseFormat.JSON).build()) {
            ChatResponse r = model.chat(UserMessage.from("Describe Paris as JSON."));
            JsonNode node = JSON.readTree(r.aiMessage().text());
            assertTrue(node.isObject(), r.aiMessage().text());
        }
    }
}
