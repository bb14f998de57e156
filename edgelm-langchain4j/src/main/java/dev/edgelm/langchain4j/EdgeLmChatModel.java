package dev.edgelm.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * LangChain4j's {@link ChatModel} on EdgeLM, in-process: no server, no HTTP. Messages go through the model's own
 * chat template (tools included), replies come back with their thinking and tool execution requests, JSON
 * response formats are enforced by constrained decoding (any JSON object, or the schema's grammar).
 *
 * <pre>{@code
 * ChatModel model = EdgeLmChatModel.builder().modelPath("Qwen/Qwen3.5-0.8B").maxTokens(512).build();
 * String answer = model.chat("Why is the sky blue?");
 * }</pre>
 *
 * Thread-safe: concurrent calls are decoded together (see {@link EdgeLmBuilder#parallel}).
 */
public final class EdgeLmChatModel implements ChatModel, AutoCloseable {
    private final EdgeLmModel model;
    private final boolean ownsModel;
    private final EdgeLmChatRequestParameters defaults;
    private final List<ChatModelListener> listeners;

    private EdgeLmChatModel(Builder b) {
        this.defaults = b.defaults();
        this.ownsModel = b.model == null;
        this.model = b.openModel();
        this.listeners = List.copyOf(b.listeners);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        ChatTurn.Running running = ChatTurn.prepare(model, request).submit(ChatTurn.Sink.NONE);
        try {
            return running.response().get();
        } catch (InterruptedException e) {
            running.cancel();
            Thread.currentThread().interrupt();
            throw new dev.langchain4j.exception.LangChain4jException("interrupted while waiting for the reply", e);
        } catch (ExecutionException | CompletionException e) {
            throw failure(e.getCause());
        }
    }

    static RuntimeException failure(Throwable cause) {
        if (cause instanceof CompletionException c && c.getCause() != null) {
            cause = c.getCause();
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        if (cause instanceof Error err) {
            throw err;
        }
        return new dev.langchain4j.exception.LangChain4jException(String.valueOf(cause), cause);
    }

    @Override
    public ChatRequestParameters defaultRequestParameters() {
        return defaults;
    }

    @Override
    public List<ChatModelListener> listeners() {
        return listeners;
    }

    @Override
    public ModelProvider provider() {
        return ModelProvider.OTHER;
    }

    @Override
    public Set<Capability> supportedCapabilities() {
        return Set.of(Capability.RESPONSE_FORMAT_JSON_SCHEMA);
    }

    /** The model this chat model runs. */
    public EdgeLmModel model() {
        return model;
    }

    /** Frees the model if this chat model opened it. */
    @Override
    public void close() {
        if (ownsModel) {
            model.close();
        }
    }

    public static final class Builder extends EdgeLmBuilder<Builder> {
        private Builder() {}

        public EdgeLmChatModel build() {
            return new EdgeLmChatModel(this);
        }
    }
}
