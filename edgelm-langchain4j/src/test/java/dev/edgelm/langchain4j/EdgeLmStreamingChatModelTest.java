package dev.edgelm.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import dev.langchain4j.model.output.FinishReason;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link EdgeLmStreamingChatModel} on the tiny chat model: the callbacks, their order and their thread, cancellation. */
class EdgeLmStreamingChatModelTest {
    private static EdgeLmStreamingChatModel model;

    @BeforeAll
    static void open() {
        model = EdgeLmStreamingChatModel.builder().model(TinyChat.model()).maxTokens(24).build();
    }

    @AfterAll
    static void close() {
        model.close();
    }

    /** Collects a stream. */
    static class Collector implements StreamingChatResponseHandler {
        final StringBuffer text = new StringBuffer();
        final StringBuffer thinking = new StringBuffer();
        final List<PartialToolCall> partialCalls = new CopyOnWriteArrayList<>();
        final List<CompleteToolCall> completeCalls = new CopyOnWriteArrayList<>();
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final Set<Thread> threads = new CopyOnWriteArraySet<>();
        final CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        volatile int partials;

        @Override
        public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
            threads.add(Thread.currentThread());
            text.append(partial.text());
            partials++;
        }

        @Override
        public void onPartialThinking(PartialThinking partial) {
            threads.add(Thread.currentThread());
            thinking.append(partial.text());
        }

        @Override
        public void onPartialToolCall(PartialToolCall call) {
            threads.add(Thread.currentThread());
            partialCalls.add(call);
        }

        @Override
        public void onCompleteToolCall(CompleteToolCall call) {
            threads.add(Thread.currentThread());
            completeCalls.add(call);
        }

        @Override
        public void onCompleteResponse(ChatResponse response) {
            threads.add(Thread.currentThread());
            done.complete(response);
        }

        @Override
        public void onError(Throwable error) {
            threads.add(Thread.currentThread());
            errors.add(error);
            done.completeExceptionally(error);
        }

        ChatResponse await() throws Exception {
            return done.get(120, TimeUnit.SECONDS);
        }
    }

    @Test
    void partialResponsesConcatenateToTheFinalTextWhichIsTheGolden() throws Exception {
        Collector c = new Collector();
        model.chat(ChatRequest.builder().messages(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1)).build(), c);
        ChatResponse r = c.await();
        assertEquals(TinyChat.text("turn1_reply"), r.aiMessage().text());
        assertEquals(r.aiMessage().text(), c.text.toString());
        assertTrue(c.partials > 1, "streamed in pieces: " + c.partials);
        assertEquals(FinishReason.STOP, r.finishReason());
        assertEquals(TinyChat.replyIds("turn1").length, r.tokenUsage().outputTokenCount());
        assertEquals(1, c.threads.size(), "every callback on one thread");
        assertFalse(c.threads.contains(Thread.currentThread()));
        assertTrue(c.errors.isEmpty());
    }

    @Test
    void thinkingStreamsToOnPartialThinkingOnly() throws Exception {
        Collector c = new Collector();
        model.chat(ChatRequest.builder().messages(UserMessage.from("Hi"))
                .parameters(EdgeLmChatRequestParameters.builder().thinking(true).maxOutputTokens(16).build()).build(), c);
        ChatResponse r = c.await();
        assertEquals(TinyChat.text("think_reply"), c.thinking.toString());
        assertEquals(r.aiMessage().thinking(), c.thinking.toString());
        assertEquals("", c.text.toString());
    }

    @Test
    void aForcedToolCallStreamsItsArgumentsAndCompletes() throws Exception {
        ToolSpecification weather = ToolSpecification.builder().name("weather").description("The weather of a city")
                .parameters(JsonObjectSchema.builder().addStringProperty("city").required("city").build()).build();
        Collector c = new Collector();
        model.chat(ChatRequest.builder().messages(UserMessage.from("Weather in Paris?"))
                .parameters(ChatRequestParameters.builder().toolSpecifications(weather).toolChoice(ToolChoice.REQUIRED).build()).build(), c);
        ChatResponse r = c.await();
        assertEquals(1, r.aiMessage().toolExecutionRequests().size());
        var call = r.aiMessage().toolExecutionRequests().getFirst();
        assertEquals("weather", call.name());
        StringBuilder arguments = new StringBuilder();
        for (PartialToolCall p : c.partialCalls) {
            assertEquals(0, p.index());
            assertEquals(call.id(), p.id());
            assertEquals("weather", p.name());
            arguments.append(p.partialArguments());
        }
        // the pieces join to the arguments (a call whose markup gave no parameter has none: its arguments are {})
        assertEquals(c.partialCalls.isEmpty() ? "{}" : arguments.toString(), call.arguments());
        assertEquals(1, c.completeCalls.size());
        assertEquals(call, c.completeCalls.getFirst().toolExecutionRequest());
        assertEquals(1, c.threads.size());
    }

    @Test
    void cancellingStopsTheStreamAndNothingFollows() throws Exception {
        CountDownLatch threeSeen = new CountDownLatch(1);
        Collector c = new Collector() {
            @Override
            public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
                super.onPartialResponse(partial, context);
                StreamingHandle handle = context.streamingHandle();
                if (partials == 3) {
                    assertFalse(handle.isCancelled());
                    handle.cancel();
                    assertTrue(handle.isCancelled());
                    threeSeen.countDown();
                }
            }
        };
        try (EdgeLmStreamingChatModel unbounded = EdgeLmStreamingChatModel.builder().model(TinyChat.model()).build()) {
            unbounded.chat(ChatRequest.builder().messages(UserMessage.from("Tell me a long story about animals")).build(), c);
            assertTrue(threeSeen.await(120, TimeUnit.SECONDS));
            // the scheduler frees the slot: a request after it runs to completion, and the cancelled one never completes
            Collector next = new Collector();
            model.chat(ChatRequest.builder().messages(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1)).build(), next);
            assertEquals(TinyChat.text("turn1_reply"), next.await().aiMessage().text());
        }
        assertEquals(3, c.partials);
        assertFalse(c.done.isDone(), "no onCompleteResponse after cancel");
        assertTrue(c.errors.isEmpty());
    }

    @Test
    void anExceptionFromTheHandlerGoesToOnErrorAndTheStreamGoesOn() throws Exception {
        RuntimeException boom = new RuntimeException("user code");
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        model.chat(ChatRequest.builder().messages(SystemMessage.from(TinyChat.SYSTEM), UserMessage.from(TinyChat.TURN1)).build(),
                new StreamingChatResponseHandler() {
                    @Override
                    public void onPartialResponse(String partial) {
                        throw boom;
                    }

                    @Override
                    public void onCompleteResponse(ChatResponse response) {
                        done.complete(response);
                    }

                    @Override
                    public void onError(Throwable error) {
                        errors.add(error);
                    }
                });
        ChatResponse r = done.get(120, TimeUnit.SECONDS);
        assertEquals(TinyChat.text("turn1_reply"), r.aiMessage().text());
        assertFalse(errors.isEmpty());
        errors.forEach(e -> assertSame(boom, e));
    }

    @Test
    void aRequestThatCannotBeServedThrowsOnTheCaller() {
        Collector c = new Collector();
        assertThrows(UnsupportedFeatureException.class, () -> model.chat(ChatRequest.builder().messages(UserMessage.from("Hi"))
                .parameters(ChatRequestParameters.builder().modelName("other").build()).build(), c));
        assertNull(c.done.getNow(null));
        assertTrue(c.errors.isEmpty());
    }
}
