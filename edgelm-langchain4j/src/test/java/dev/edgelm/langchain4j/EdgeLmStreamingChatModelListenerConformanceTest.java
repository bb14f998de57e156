package dev.edgelm.langchain4j;

import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.common.AbstractStreamingChatModelListenerIT;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import java.util.List;

/**
 * LangChain4j's listener conformance suite ({@code AbstractStreamingChatModelListenerIT}) on {@link EdgeLmStreamingChatModel}: the
 * request a listener sees (messages, the merged parameters, the tools), the response (id, model name, token usage,
 * finish reason), and a failure reported to the handler's and the listener's {@code onError} (the failing model's model is closed).
 */
class EdgeLmStreamingChatModelListenerConformanceTest extends AbstractStreamingChatModelListenerIT {

    @Override
    protected StreamingChatModel createModel(ChatModelListener listener) {
        return EdgeLmStreamingChatModel.builder().model(TinyChat.model()).listeners(List.of(listener))
                .defaultRequestParameters(ChatRequestParameters.builder().modelName(modelName()).build())
                .temperature(temperature()).topP(topP()).maxTokens(maxTokens()).seed(3L).build();
    }

    @Override
    protected String modelName() {
        return TinyChat.DIR.toString();
    }

    @Override
    protected StreamingChatModel createFailingModel(ChatModelListener listener) {
        EdgeLmModel closed = EdgeLmModel.open(TinyChat.DIR.toString(), new EdgeLmModel.Settings(1, 256, 1, 0));
        closed.close();
        return EdgeLmStreamingChatModel.builder().model(closed).listeners(List.of(listener)).build();
    }

    @Override
    protected Class<? extends Exception> expectedExceptionClass() {
        return IllegalStateException.class;
    }
}
