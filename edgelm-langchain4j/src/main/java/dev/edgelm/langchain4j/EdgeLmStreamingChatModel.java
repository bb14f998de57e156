package dev.edgelm.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * LangChain4j's {@link StreamingChatModel} on EdgeLM, in-process: the reply's text comes to
 * {@code onPartialResponse} as it is generated, thinking to {@code onPartialThinking} (never into the text), tool
 * calls to {@code onPartialToolCall} (the arguments a parameter at a time, each piece with the call's id and name) and
 * {@code onCompleteToolCall}, then {@code onCompleteResponse} with the whole message, its {@code TokenUsage} and
 * {@code FinishReason}. A request EdgeLM cannot serve is refused at once (the call throws); a failure during the
 * generation goes to {@code onError}.
 *
 * <p>Every callback of one request runs on one thread of its own (a virtual thread), never on the caller's and
 * never on the model's: a slow handler holds up its own reply only. The {@link StreamingHandle} of the partial
 * callbacks cancels the generation within a token; after it, no callback follows (not even
 * {@code onCompleteResponse}). An exception thrown by {@code onPartialResponse} or {@code onCompleteResponse}
 * goes to {@code onError} and the stream goes on; one thrown by {@code onError} is ignored.
 */
public final class EdgeLmStreamingChatModel extends EdgeLmChatModelBase implements StreamingChatModel {
    private static final System.Logger LOG = System.getLogger(EdgeLmStreamingChatModel.class.getName());


    private EdgeLmStreamingChatModel(Builder b) {
        super(b);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        Stream stream = new Stream(handler);
        ChatTurn turn = ChatTurn.prepare(model, request); // a request that cannot be served throws here, on the caller
        try {
            stream.running = turn.submit(stream);
            stream.running.response().whenComplete((response, failure) -> stream.events.add(new End(response, failure)));
        } catch (RuntimeException e) {
            stream.events.add(new End(null, e)); // the model could not take it (closed): onError, as for any failure
        }
        Thread.ofVirtual().name("edgelm-langchain4j-stream").start(stream::deliver);
    }

    private record Text(String text) {}

    private record Thinking(String text) {}

    private record ToolArguments(int index, String id, String name, String fragment) {}

    private record End(ChatResponse response, Throwable failure) {}

    /** One request's events, queued on the model's thread and handed to the handler on the stream's own thread. */
    private static final class Stream implements ChatTurn.Sink, StreamingHandle {
        final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        final StreamingChatResponseHandler handler;
        volatile ChatTurn.Running running;
        private volatile boolean cancelled;

        Stream(StreamingChatResponseHandler handler) {
            this.handler = handler;
        }

        @Override
        public void onText(String text) {
            events.add(new Text(text));
        }

        @Override
        public void onThinking(String text) {
            events.add(new Thinking(text));
        }

        // a call's start is not passed on: LangChain4j's partial calls carry argument text, each with the id and name

        @Override
        public void onToolCallArguments(int index, String id, String name, String fragment) {
            events.add(new ToolArguments(index, id, name, fragment));
        }

        @Override
        public void cancel() {
            cancelled = true;
            ChatTurn.Running r = running;
            if (r != null) {
                r.cancel();
            }
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        void deliver() {
            while (true) {
                Object event;
                try {
                    event = events.take();
                } catch (InterruptedException e) {
                    cancel();
                    return;
                }
                if (cancelled) {
                    if (event instanceof End) {
                        return;
                    }
                    continue;
                }
                switch (event) {
                    case Text t -> call(() -> handler.onPartialResponse(new PartialResponse(t.text()), new PartialResponseContext(this)));
                    case Thinking t -> call(() -> handler.onPartialThinking(new PartialThinking(t.text()), new PartialThinkingContext(this)));
                    case ToolArguments a -> call(() -> handler.onPartialToolCall(partial(a.index(), a.id(), a.name(), a.fragment()),
                            new PartialToolCallContext(this)));
                    case End end -> {
                        if (end.failure() != null) {
                            error(EdgeLmChatModel.failure(end.failure()));
                        } else {
                            List<ToolExecutionRequest> calls = end.response().aiMessage().toolExecutionRequests();
                            for (int i = 0; i < calls.size(); i++) {
                                int index = i;
                                call(() -> handler.onCompleteToolCall(new CompleteToolCall(index, calls.get(index))));
                            }
                            call(() -> handler.onCompleteResponse(end.response()));
                        }
                        return;
                    }
                    default -> throw new IllegalStateException("unknown event " + event);
                }
            }
        }

        private static PartialToolCall partial(int index, String id, String name, String arguments) {
            return PartialToolCall.builder().index(index).id(id).name(name).partialArguments(arguments).build();
        }

        /** Runs a handler callback; what it throws goes to {@code onError}. */
        private void call(Runnable callback) {
            try {
                callback.run();
            } catch (RuntimeException e) {
                error(e);
            }
        }

        private void error(Throwable e) {
            try {
                handler.onError(e);
            } catch (RuntimeException ignored) {
                LOG.log(System.Logger.Level.WARNING, "StreamingChatResponseHandler.onError threw; ignored", ignored);
            }
        }
    }

    public static final class Builder extends EdgeLmBuilder<Builder> {
        private Builder() {}

        public EdgeLmStreamingChatModel build() {
            return new EdgeLmStreamingChatModel(this);
        }
    }
}
