package dev.edgelm.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import java.util.List;
import java.util.Set;

/**
 * What {@link EdgeLmChatModel} and {@link EdgeLmStreamingChatModel} share: the model they run (and whether they
 * opened it), the default request parameters and listeners from the builder, and the answers to LangChain4j's
 * questions about the provider. LangChain4j's {@code ChatModel} and {@code StreamingChatModel} are separate
 * interfaces that ask the same questions; these methods answer both.
 */
public abstract sealed class EdgeLmChatModelBase implements AutoCloseable
        permits EdgeLmChatModel, EdgeLmStreamingChatModel {
    final EdgeLmModel model;
    private final boolean ownsModel;
    private final EdgeLmChatRequestParameters defaults;
    private final List<ChatModelListener> listeners;

    EdgeLmChatModelBase(EdgeLmBuilder<?> b) {
        this.defaults = b.defaults();
        this.ownsModel = b.model == null;
        this.model = b.openModel();
        this.listeners = List.copyOf(b.listeners);
    }

    public ChatRequestParameters defaultRequestParameters() {
        return defaults;
    }

    public List<ChatModelListener> listeners() {
        return listeners;
    }

    public ModelProvider provider() {
        return ModelProvider.OTHER;
    }

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
}
