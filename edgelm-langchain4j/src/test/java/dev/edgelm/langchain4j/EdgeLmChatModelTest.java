package dev.edgelm.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.InvalidRequestException;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link EdgeLmChatModel} on the tiny chat model, greedy, against independent references: the fixture's goldens
 * (Hugging Face transformers' greedy generation of the same conversations) and EdgeLM's single-sequence
 * {@link Session} path (what {@code edgelm run} uses), which shares neither the message mapping nor the batch
 * scheduler with the chat model.
 */
class EdgeLmChatModelTest {
    private static EdgeLmChatModel model;

    @BeforeAll
    static void open() {
        model = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(24).build();
    }

    @AfterAll
    static void close() {
        model.close(); // leaves the shared model open
    }

    private static ChatRequest turn1(ChatRequestParameters parameters) {
        ChatRequest.Builder b = ChatRequest.builder().messages(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1));
        return parameters == null ? b.build() : b.parameters(parameters).build();
    }

    @Test
    void greedyTurnMatchesTheTransformersGolden() {
        ChatResponse r = model.chat(turn1(null));
        assertEquals(TinyChat.text("turn1_reply"), r.aiMessage().text());
        assertTrue(r.aiMessage().toolExecutionRequests().isEmpty());
        assertNull(r.aiMessage().thinking());
        assertEquals(FinishReason.STOP, r.finishReason()); // the golden ends with <|im_end|>
        assertEquals(TinyChat.ids("turn1_prompt_ids").length, r.tokenUsage().inputTokenCount());
        assertEquals(TinyChat.replyIds("turn1").length, r.tokenUsage().outputTokenCount());
        assertEquals(r.tokenUsage().inputTokenCount() + r.tokenUsage().outputTokenCount(), r.tokenUsage().totalTokenCount());
        assertEquals(TinyChat.DIR.toString(), r.metadata().modelName());
        assertTrue(r.metadata().id().startsWith("edgelm-"));
    }

    @Test
    void historyWithAnAssistantTurnMatchesTheGolden() {
        ChatResponse r = model.chat(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1),
                AiMessage.from(TinyChat.text("turn1_reply")), UserMessage.from(TinyChat.TURN2));
        assertEquals(TinyChat.text("turn2_reply"), r.aiMessage().text());
        assertEquals(TinyChat.ids("turn2_prompt_ids").length, r.tokenUsage().inputTokenCount());
        assertEquals(24, r.tokenUsage().outputTokenCount());
        assertEquals(FinishReason.LENGTH, r.finishReason()); // the golden ran to max_new_tokens 24
    }

    @Test
    void thinkingGoesToTheThinkingFieldNotTheText() {
        ChatResponse r = model.chat(ChatRequest.builder().messages(UserMessage.from("Hi"))
                .parameters(EdgeLmChatRequestParameters.builder().thinking(true).maxOutputTokens(16).build()).build());
        // the golden prompt ends inside <think>: the whole (short) reply is thinking
        assertEquals(TinyChat.text("think_reply"), r.aiMessage().thinking());
        assertEquals("", r.aiMessage().text());
        assertEquals(TinyChat.ids("think_prompt_ids").length, r.tokenUsage().inputTokenCount());
    }

    @Test
    void sameAsTheSessionPathOfEdgelmRun() {
        String question = "Tell me a long story about a lighthouse.";
        int n = 40;
        ChatResponse r = model.chat(ChatRequest.builder().messages(UserMessage.from(question))
                .parameters(ChatRequestParameters.builder().maxOutputTokens(n).build()).build());

        Engine engine = TinyChat.model().engine();
        ChatFormat format = ChatFormat.load(engine.modelPath());
        int[] prompt = format.encodePrompt(List.of(Map.of("role", "user", "content", question)), null, true,
                Map.of("enable_thinking", false));
        Session session = engine.newSession();
        session.prefill(prompt);
        GenerationResult expected = session.generate(GenerationOptions.greedy().toBuilder().maxNewTokens(n)
                .addStopTokenIds(format.stopTokenIds()).build(), TinyChatDecoder.of(format), dev.edgelm.engine.GenerationListener.NONE);
        assertEquals(expected.text(), r.aiMessage().text());
        assertEquals(expected.tokens().length, r.tokenUsage().outputTokenCount());
        assertEquals(prompt.length, r.tokenUsage().inputTokenCount());
    }

    @Test
    void maxTokensEndsTheReplyWithLength() {
        ChatResponse r = model.chat(turn1(ChatRequestParameters.builder().maxOutputTokens(5).build()));
        assertEquals(5, r.tokenUsage().outputTokenCount());
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertTrue(TinyChat.text("turn1_reply").startsWith(r.aiMessage().text()));
    }

    @Test
    void aStopSequenceCutsTheReplyBeforeIt() {
        String golden = TinyChat.text("turn1_reply");
        String stop = golden.substring(6, 10);
        ChatResponse r = model.chat(turn1(ChatRequestParameters.builder().stopSequences(List.of(stop)).build()));
        assertEquals(golden.substring(0, golden.indexOf(stop)), r.aiMessage().text());
        assertEquals(FinishReason.STOP, r.finishReason());
    }

    @Test
    void builderDefaultsApplyAndRequestParametersOverrideThem() {
        try (EdgeLmChatModel three = EdgeLmChatModel.builder().model(TinyChat.model()).maxTokens(3).build()) {
            assertEquals(3, three.chat(turn1(null)).tokenUsage().outputTokenCount());
            assertEquals(5, three.chat(turn1(ChatRequestParameters.builder().maxOutputTokens(5).build())).tokenUsage().outputTokenCount());
        }
    }

    @Test
    void sampledRepliesRepeatWithTheSameSeed() {
        EdgeLmChatRequestParameters p = EdgeLmChatRequestParameters.builder().temperature(1.0).topK(50).seed(7L).maxOutputTokens(12).build();
        assertEquals(model.chat(turn1(p)).aiMessage().text(), model.chat(turn1(p)).aiMessage().text());
    }

    @Test
    void refusesWhatItCannotServe() {
        UnsupportedFeatureException image = assertThrows(UnsupportedFeatureException.class, () -> model.chat(UserMessage.from(
                TextContent.from("What is this?"), ImageContent.from("aGVsbG8=", "image/png"))));
        assertTrue(image.getMessage().contains("image"), image.getMessage());

        UnsupportedFeatureException name = assertThrows(UnsupportedFeatureException.class,
                () -> model.chat(turn1(ChatRequestParameters.builder().modelName("gpt-4o").build())));
        assertTrue(name.getMessage().contains("modelName") && name.getMessage().contains("gpt-4o"), name.getMessage());

        InvalidRequestException temperature = assertThrows(InvalidRequestException.class,
                () -> model.chat(turn1(ChatRequestParameters.builder().temperature(-1.0).build())));
        assertTrue(temperature.getMessage().contains("temperature"), temperature.getMessage());

        AiMessage badCall = AiMessage.from(ToolExecutionRequest.builder().id("c1").name("weather").arguments("{city").build());
        InvalidRequestException args = assertThrows(InvalidRequestException.class,
                () -> model.chat(UserMessage.from("Weather?"), badCall, UserMessage.from("And?")));
        assertTrue(args.getMessage().contains("messages[1]") && args.getMessage().contains("weather"), args.getMessage());
    }

    @Test
    void aPromptLongerThanTheContextIsRefusedWithBothLengths() {
        try (EdgeLmChatModel small = EdgeLmChatModel.builder().modelPath(TinyChat.DIR.toString()).threads(1).contextLength(32).build()) {
            InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> small.chat(turn1(null)));
            assertTrue(e.getMessage().contains("42 tokens") && e.getMessage().contains("holds 32"), e.getMessage());
        }
    }
}
