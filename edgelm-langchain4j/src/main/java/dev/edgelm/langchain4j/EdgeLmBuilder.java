package dev.edgelm.langchain4j;

import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ToolChoice;
import java.util.ArrayList;
import java.util.List;

/**
 * What both chat models are built from: the model (a name to open, or an {@link EdgeLmModel} to share), how it
 * runs, and the default request parameters. Sampling fields not set keep the model's recommended settings
 * ({@code generation_config.json}: greedy for the tiny test model, sampled for the released Qwen3.5 models).
 */
public abstract class EdgeLmBuilder<B extends EdgeLmBuilder<B>> {
    String modelPath;
    EdgeLmModel model;
    int threads;
    int contextLength = EdgeLmModel.Settings.DEFAULT_CONTEXT;
    int parallel = 1;
    long cacheRamBytes = EdgeLmModel.Settings.defaults().cacheRamBytes();
    final EdgeLmChatRequestParameters.Builder parameters = EdgeLmChatRequestParameters.builder();
    ChatRequestParameters defaultRequestParameters;
    final List<ChatModelListener> listeners = new ArrayList<>();

    EdgeLmBuilder() {}

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * The model to open, as {@code edgelm run} names it: a {@code .gguf} file, a Hugging Face checkpoint folder, or
     * a Hub id such as {@code Qwen/Qwen3.5-0.8B}. The chat model owns what it opens ({@code close()} frees it).
     */
    public B modelPath(String modelPath) {
        this.modelPath = modelPath;
        return self();
    }

    /** A model already open, shared with other chat models (closing the chat model leaves it open). */
    public B model(EdgeLmModel model) {
        this.model = model;
        return self();
    }

    /** Kernel worker threads (default: the physical cores). */
    public B threads(int threads) {
        this.threads = threads;
        return self();
    }

    /** Tokens one request may hold, prompt and reply together (default {@value EdgeLmModel.Settings#DEFAULT_CONTEXT}). */
    public B contextLength(int tokens) {
        this.contextLength = tokens;
        return self();
    }

    /** Generations decoded at once (default 1); further requests wait for a free slot. */
    public B parallel(int n) {
        this.parallel = n;
        return self();
    }

    /** Memory for the state snapshots that let a request reuse an earlier one's history (default 256 MiB). */
    public B cacheRamMb(long mb) {
        this.cacheRamBytes = mb << 20;
        return self();
    }

    /** Sampling temperature; 0 = greedy. */
    public B temperature(Double temperature) {
        parameters.temperature(temperature);
        return self();
    }

    public B topP(Double topP) {
        parameters.topP(topP);
        return self();
    }

    public B topK(Integer topK) {
        parameters.topK(topK);
        return self();
    }

    public B minP(Double minP) {
        parameters.minP(minP);
        return self();
    }

    public B repeatPenalty(Double repeatPenalty) {
        parameters.repeatPenalty(repeatPenalty);
        return self();
    }

    public B presencePenalty(Double presencePenalty) {
        parameters.presencePenalty(presencePenalty);
        return self();
    }

    public B frequencyPenalty(Double frequencyPenalty) {
        parameters.frequencyPenalty(frequencyPenalty);
        return self();
    }

    /** At most this many tokens per reply (default: what the context has room for). */
    public B maxTokens(Integer maxTokens) {
        parameters.maxOutputTokens(maxTokens);
        return self();
    }

    public B seed(Long seed) {
        parameters.seed(seed);
        return self();
    }

    /** Strings that end the reply (not included in it). */
    public B stop(List<String> stop) {
        parameters.stopSequences(stop);
        return self();
    }

    /** Thinking on or off (default off): the reasoning comes back as {@code AiMessage.thinking()}. */
    public B thinking(Boolean thinking) {
        parameters.thinking(thinking);
        return self();
    }

    public B toolChoice(ToolChoice toolChoice) {
        parameters.toolChoice(toolChoice);
        return self();
    }

    public B responseFormat(ResponseFormat responseFormat) {
        parameters.responseFormat(responseFormat);
        return self();
    }

    /**
     * Default request parameters (LangChain4j's common ones or {@link EdgeLmChatRequestParameters}); the fields
     * set on this builder take precedence over them.
     */
    public B defaultRequestParameters(ChatRequestParameters parameters) {
        this.defaultRequestParameters = parameters;
        return self();
    }

    public B listeners(List<ChatModelListener> listeners) {
        this.listeners.clear();
        if (listeners != null) {
            this.listeners.addAll(listeners);
        }
        return self();
    }

    /** The merged default parameters; a model name is refused (one chat model runs one model). */
    EdgeLmChatRequestParameters defaults() {
        String name = model != null ? model.name() : modelPath;
        EdgeLmChatRequestParameters own = parameters.build();
        EdgeLmChatRequestParameters merged = defaultRequestParameters == null ? own
                : EdgeLmChatRequestParameters.builder().overrideWith(defaultRequestParameters).overrideWith(own).build();
        if (merged.modelName() != null && !merged.modelName().equals(name)) {
            throw new dev.langchain4j.exception.UnsupportedFeatureException("the 'modelName' parameter is not supported"
                    + " in the default request parameters: name the model with modelPath(...), got \"" + merged.modelName() + "\"");
        }
        return merged;
    }

    /** The model to run: the shared one, or the one {@link #modelPath} names, opened now. */
    EdgeLmModel openModel() {
        if (model != null) {
            if (modelPath != null) {
                throw new IllegalArgumentException("give either modelPath(...) or model(...), not both");
            }
            return model;
        }
        if (modelPath == null || modelPath.isBlank()) {
            throw new IllegalArgumentException("modelPath(...) or model(...) is required");
        }
        return EdgeLmModel.open(modelPath, new EdgeLmModel.Settings(threads, contextLength, parallel, cacheRamBytes));
    }
}
