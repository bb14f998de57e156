package dev.edgelm.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.chat.ChatPrompt;
import dev.edgelm.chat.ReplyParser;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.batch.Generation;
import dev.edgelm.engine.batch.GenerationRequest;
import dev.edgelm.grammar.Grammar;
import dev.edgelm.grammar.GrammarConstraint;
import dev.edgelm.grammar.JsonSchemaGrammar;
import dev.edgelm.template.ChatTemplateException;
import dev.edgelm.util.EdgeLmException;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.InvalidRequestException;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.internal.JsonSchemaElementUtils;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.ChatResponseMetadata;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One LangChain4j chat request on its way through the model: the messages and tools turned into the chat
 * template's shape and rendered ({@link ChatPrompt}, as the HTTP server renders OpenAI messages), the
 * parameters turned into {@link GenerationOptions} (a JSON response format into a grammar constraint), the
 * generation submitted to the model's scheduler, and the reply parsed ({@link ReplyParser}) into an
 * {@link AiMessage}: text, thinking and tool execution requests.
 */
final class ChatTurn {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    /** Receives the reply's parts as they are generated (on the scheduler's thread). */
    interface Sink {
        Sink NONE = new Sink() {};

        default void onText(String text) {}

        default void onThinking(String text) {}

        /** A tool call starts: its index in this reply, its generated id and the function's name. */
        default void onToolCallStart(int index, String id, String name) {}

        default void onToolCallArguments(int index, String id, String name, String fragment) {}
    }

    private final EdgeLmModel model;
    private final ChatPrompt prompt;
    private final int[] ids;
    private final GenerationOptions options;
    /** The declared tools whose calls are parsed out of the reply; null when none are. */
    private final List<Map<String, Object>> parsedTools;

    private ChatTurn(EdgeLmModel model, ChatPrompt prompt, int[] ids, GenerationOptions options, List<Map<String, Object>> parsedTools) {
        this.model = model;
        this.prompt = prompt;
        this.ids = ids;
        this.options = options;
        this.parsedTools = parsedTools;
    }

    /**
     * Checks and prepares {@code request} (its parameters already merged with the model's defaults). A request
     * EdgeLM cannot serve is an {@link UnsupportedFeatureException}, a malformed one an
     * {@link InvalidRequestException}, each naming what is wrong.
     */
    static ChatTurn prepare(EdgeLmModel model, ChatRequest request) {
        ChatRequestParameters p = request.parameters();
        checkModelName(model, p.modelName());
        EdgeLmChatRequestParameters own = p instanceof EdgeLmChatRequestParameters e ? e : null;
        boolean thinking = own != null && Boolean.TRUE.equals(own.thinking());

        ResponseFormat format = p.responseFormat();
        boolean json = format != null && format.type() == ResponseFormatType.JSON;
        if (json && thinking) {
            // the constraint would hold from the first token, inside the thinking block
            throw new UnsupportedFeatureException("a JSON response format with thinking on is not supported: turn thinking off");
        }
        List<Map<String, Object>> tools = tools(p.toolSpecifications());
        ToolChoice choice = p.toolChoice() == null ? ToolChoice.AUTO : p.toolChoice();
        if (choice == ToolChoice.REQUIRED && tools == null) {
            throw new InvalidRequestException("toolChoice is REQUIRED but no tool specifications are given");
        }
        List<Map<String, Object>> shown = choice == ToolChoice.NONE ? null : tools; // NONE: the model does not see them

        ChatPrompt prompt;
        try {
            prompt = ChatPrompt.render(model.format().template(), messages(request.messages()), shown,
                    Map.of("enable_thinking", thinking));
        } catch (ChatTemplateException e) {
            throw new InvalidRequestException("the chat template cannot render these messages: " + e.getMessage());
        }
        if (choice == ToolChoice.REQUIRED && !json) {
            // the stock template's call opening written into the prompt makes the reply a call, without a grammar
            prompt = prompt.forcingCallOf(tools);
        }
        int[] ids = model.format().tokenizer().encode(prompt.text());
        int context = model.contextLength();
        if (ids.length >= context) {
            throw new InvalidRequestException("the prompt is " + ids.length + " tokens and the context holds " + context
                    + " (prompt and reply together; see contextLength)");
        }
        int room = context - ids.length;
        Integer max = p.maxOutputTokens();
        if (max != null && max < 1) {
            throw new InvalidRequestException("maxOutputTokens must be >= 1, got " + max);
        }
        GenerationOptions.Builder b = model.engine().defaultGenerationOptions()
                .addStopTokenIds(model.format().stopTokenIds())
                .maxNewTokens(max == null ? room : Math.min(max, room)); // clamped to the context
        try {
            if (p.temperature() != null) {
                b.temperature(p.temperature().floatValue());
            }
            if (p.topP() != null) {
                if (p.topP() == 0) {
                    b.topK(1); // nothing but the most likely token
                } else {
                    b.topP(p.topP().floatValue());
                }
            }
            if (p.topK() != null) {
                b.topK(p.topK());
            }
            if (p.frequencyPenalty() != null) {
                b.frequencyPenalty(p.frequencyPenalty().floatValue());
            }
            if (p.presencePenalty() != null) {
                b.presencePenalty(p.presencePenalty().floatValue());
            }
            if (p.stopSequences() != null && !p.stopSequences().isEmpty()) {
                b.stopStrings(p.stopSequences());
            }
            if (own != null) {
                if (own.minP() != null) {
                    b.minP(own.minP().floatValue());
                }
                if (own.repeatPenalty() != null) {
                    b.repetitionPenalty(own.repeatPenalty().floatValue());
                }
                if (own.seed() != null) {
                    b.seed(own.seed());
                }
            }
        } catch (EdgeLmException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        if (json) {
            Grammar grammar = format.jsonSchema() == null ? JsonSchemaGrammar.anyObject() : schemaGrammar(format);
            b.constraint(GrammarConstraint.factory(grammar, model.vocabulary()));
        }
        // with a JSON format the reply is the JSON document: tool markup is not looked for (as in the server)
        return new ChatTurn(model, prompt, ids, b.build(), json || choice == ToolChoice.NONE ? null : tools);
    }

    private static void checkModelName(EdgeLmModel model, String name) {
        if (name != null && !name.equals(model.name())) {
            throw new UnsupportedFeatureException("the 'modelName' parameter is not supported: this chat model runs "
                    + model.name() + " (load another model with another chat model), got \"" + name + "\"");
        }
    }

    /** The grammar of the format's schema; a keyword the grammar compiler does not support is named. */
    private static Grammar schemaGrammar(ResponseFormat format) {
        Map<String, Object> schema = JsonSchemaElementUtils.toMap(format.jsonSchema().rootElement());
        try {
            return JsonSchemaGrammar.fromSchema(JSON.valueToTree(schema));
        } catch (EdgeLmException e) {
            throw new UnsupportedFeatureException("the JSON schema of the response format (" + format.jsonSchema().name()
                    + ") is not supported: " + e.getMessage());
        }
    }

    /** Tool specifications in the shape of OpenAI's tools (what the chat template iterates); null for none. */
    static List<Map<String, Object>> tools(List<ToolSpecification> specifications) {
        if (specifications == null || specifications.isEmpty()) {
            return null;
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (ToolSpecification spec : specifications) {
            Map<String, Object> fn = new LinkedHashMap<>();
            fn.put("name", spec.name());
            if (spec.description() != null) {
                fn.put("description", spec.description());
            }
            fn.put("parameters", spec.parameters() != null ? JsonSchemaElementUtils.toMap(spec.parameters())
                    : Map.of("type", "object", "properties", Map.of()));
            out.add(Map.of("type", "function", "function", fn));
        }
        return out;
    }

    /** The messages as the chat template takes them (OpenAI / Hugging Face shape). */
    static List<Map<String, Object>> messages(List<ChatMessage> messages) {
        if (messages == null || messages.isEmpty()) {
            throw new InvalidRequestException("the chat request has no messages");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            Map<String, Object> o = new LinkedHashMap<>();
            switch (m) {
                case SystemMessage s -> {
                    o.put("role", "system");
                    o.put("content", s.text());
                }
                case UserMessage u -> {
                    o.put("role", "user");
                    o.put("content", userContent(u, i));
                }
                case AiMessage a -> {
                    o.put("role", "assistant");
                    o.put("content", a.text() == null ? "" : a.text());
                    if (a.thinking() != null && !a.thinking().isEmpty()) {
                        o.put("reasoning_content", a.thinking());
                    }
                    if (a.hasToolExecutionRequests()) {
                        List<Map<String, Object>> calls = new ArrayList<>();
                        for (ToolExecutionRequest r : a.toolExecutionRequests()) {
                            Map<String, Object> call = new LinkedHashMap<>();
                            if (r.id() != null) {
                                call.put("id", r.id());
                            }
                            call.put("type", "function");
                            // the template iterates the arguments: OpenAI's JSON text becomes an object
                            call.put("function", Map.of("name", r.name(), "arguments", arguments(r, i)));
                            calls.add(call);
                        }
                        o.put("tool_calls", calls);
                    }
                }
                case ToolExecutionResultMessage t -> {
                    o.put("role", "tool");
                    if (t.id() != null) {
                        o.put("tool_call_id", t.id());
                    }
                    o.put("content", t.text() == null ? "" : t.text());
                }
                default -> throw new UnsupportedFeatureException("messages[" + i + "]: messages of type "
                        + m.type() + " are not supported by EdgeLM");
            }
            out.add(o);
        }
        return out;
    }

    private static Object userContent(UserMessage u, int index) {
        if (u.hasSingleText()) {
            return u.singleText();
        }
        List<Map<String, Object>> parts = new ArrayList<>();
        for (Content c : u.contents()) {
            if (!(c instanceof TextContent t)) {
                throw new UnsupportedFeatureException("messages[" + index + "]: content of type "
                        + c.type().toString().toLowerCase(Locale.ROOT) + " is not supported yet by EdgeLM's LangChain4j chat models (text only)");
            }
            parts.add(Map.of("type", "text", "text", t.text()));
        }
        return parts;
    }

    private static Map<String, Object> arguments(ToolExecutionRequest r, int index) {
        String text = r.arguments();
        if (text == null || text.isBlank()) {
            return Map.of();
        }
        try {
            return JSON.readValue(text, new TypeReference<LinkedHashMap<String, Object>>() {});
        } catch (JsonProcessingException e) {
            throw new InvalidRequestException("messages[" + index + "]: the arguments of tool call " + r.name()
                    + " are not a JSON object: " + e.getOriginalMessage());
        }
    }

    /** A submitted turn: its response once it ends, and a way to stop it. */
    static final class Running {
        private final Generation generation;
        private final CompletableFuture<ChatResponse> response;

        private Running(Generation generation, CompletableFuture<ChatResponse> response) {
            this.generation = generation;
            this.response = response;
        }

        /** Completes with the response, or exceptionally with the failure of the generation. */
        CompletableFuture<ChatResponse> response() {
            return response;
        }

        /** Stops the generation within a token; the response completes with what was generated so far. */
        void cancel() {
            generation.cancel();
        }
    }

    /** Submits the turn; its parts go to {@code sink} as they are generated. A closed model is an {@link IllegalStateException}. */
    Running submit(Sink sink) {
        if (model.isClosed()) {
            throw new IllegalStateException("the model " + model.name() + " is closed");
        }
        Reply reply = new Reply(sink);
        ReplyParser parser = new ReplyParser(prompt, parsedTools, reply);
        GenerationRequest request = new GenerationRequest(ids, options, model.decoder(), new GenerationListener() {
            @Override
            public void onText(String piece) {
                parser.push(piece);
            }
        }, model.messageStarts(ids));
        Generation g;
        try {
            g = model.scheduler().submit(request);
        } catch (EdgeLmException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        CompletableFuture<ChatResponse> response = g.future().thenApply(result -> {
            parser.finish();
            return reply.response(result);
        });
        return new Running(g, response);
    }

    /** The reply as it is assembled. */
    private final class Reply implements ReplyParser.Listener {
        private final Sink sink;
        private final StringBuilder text = new StringBuilder();
        private final StringBuilder thinking = new StringBuilder();
        private final List<String> callIds = new ArrayList<>();
        private final List<String> callNames = new ArrayList<>();
        private final List<StringBuilder> callArguments = new ArrayList<>();

        Reply(Sink sink) {
            this.sink = sink;
        }

        @Override
        public void onContent(String piece) {
            if (!piece.isEmpty()) {
                text.append(piece);
                sink.onText(piece);
            }
        }

        @Override
        public void onReasoning(String piece) {
            if (!piece.isEmpty()) {
                thinking.append(piece);
                sink.onThinking(piece);
            }
        }

        @Override
        public void onToolCallStart(int index, String name) {
            String id = "call_" + randomId(24);
            callIds.add(id);
            callNames.add(name);
            callArguments.add(new StringBuilder());
            sink.onToolCallStart(index, id, name);
        }

        @Override
        public void onToolCallArguments(int index, String fragment) {
            callArguments.get(index).append(fragment);
            sink.onToolCallArguments(index, callIds.get(index), callNames.get(index), fragment);
        }

        ChatResponse response(GenerationResult result) {
            List<ToolExecutionRequest> calls = new ArrayList<>();
            for (int i = 0; i < callIds.size(); i++) {
                String args = callArguments.get(i).toString();
                calls.add(ToolExecutionRequest.builder().id(callIds.get(i)).name(callNames.get(i))
                        .arguments(args.isEmpty() ? "{}" : args).build());
            }
            AiMessage.Builder message = AiMessage.builder().toolExecutionRequests(calls);
            if (!text.isEmpty() || calls.isEmpty()) {
                message.text(text.toString());
            }
            if (!thinking.isEmpty()) {
                message.thinking(thinking.toString());
            }
            int out = result.tokens().length;
            return ChatResponse.builder()
                    .aiMessage(message.build())
                    .metadata(ChatResponseMetadata.builder()
                            .id("edgelm-" + randomId(24))
                            .modelName(model.name())
                            .tokenUsage(new TokenUsage(ids.length, out, ids.length + out))
                            .finishReason(finishReason(result.reason(), !calls.isEmpty()))
                            .build())
                    .build();
        }
    }

    /** As llama-server decides it: "length" unless a stop token or string ended the reply; then tool calls or stop. */
    static FinishReason finishReason(StopReason reason, boolean toolCalls) {
        return switch (reason) {
            case MAX_TOKENS, CONTEXT_FULL -> FinishReason.LENGTH;
            case CANCELLED -> FinishReason.OTHER;
            case STOP_TOKEN, STOP_STRING -> toolCalls ? FinishReason.TOOL_EXECUTION : FinishReason.STOP;
        };
    }

    static String randomId(int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(ALPHANUMERIC.charAt(RANDOM.nextInt(ALPHANUMERIC.length())));
        }
        return sb.toString();
    }
}
