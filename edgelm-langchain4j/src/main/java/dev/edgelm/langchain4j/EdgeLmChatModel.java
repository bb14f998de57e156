package dev.edgelm.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
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
public final class EdgeLmChatModel extends EdgeLmChatModelBase implements ChatModel {

    private EdgeLmChatModel(Builder b) {
        super(b);
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

    public static final class Builder extends EdgeLmBuilder<Builder> {
        private Builder() {}

        public EdgeLmChatModel build() {
            return new EdgeLmChatModel(this);
        }
    }
}
