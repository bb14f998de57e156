package dev.edgelm.server;

import dev.edgelm.grammar.Grammar;
import dev.edgelm.grammar.GrammarConstraint;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.chat.ChatPrompt;
import dev.edgelm.chat.ReplyParser;
import dev.edgelm.chat.tools.QwenToolCallParser;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenLogprobs;
import dev.edgelm.template.ChatTemplateException;
import dev.edgelm.util.EdgeLmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One completion request on its way through the model, free of HTTP: it renders and tokenizes the prompt,
 * checks it against the context, submits it to the backend and turns what the model produces into the
 * OpenAI message parts (reasoning, content, tool calls, log-probabilities). Streaming requests read the parts
 * as they come ({@link #next}); all requests can read the assembled message once it ended.
 *
 * <p>The text pipeline, on the generating thread: generated text, then {@link ReplyParser} (reasoning apart
 * from the answer, then tool calls when the request declares tools).
 */
final class Generation {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    /** A part of the reply: a delta object (chat) or a text piece (raw completion), with its tokens' log-probabilities. */
    record Part(ObjectNode delta, String text, ArrayNode logprobs) {}

    /** The end: the engine's result, or the failure that ended the generation. */
    record End(GenerationResult result, RuntimeException failure) {}

    /** A tool call of the reply. */
    record ToolCall(String id, String name, StringBuilder arguments) {}

    private final ServedModel model;
    private final boolean chat;
    private final boolean stream;
    private final int[] prompt;
    private final GenerationOptions options;
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final StringBuilder reasoning = new StringBuilder();
    private final StringBuilder content = new StringBuilder();
    private final List<ToolCall> toolCalls = new ArrayList<>();
    private final ArrayNode allLogprobs = Json.array();
    private ArrayNode pendingLogprobs;
    /** The chat reply's text pipeline (null for a raw completion). */
    private final ReplyParser reply;
    private final boolean wantLogprobs;
    private GenerationBackend.Handle handle;
    private volatile boolean ended;
    private final long submittedAt = System.nanoTime();
    /** When the HTTP request arrived (before its body was read and parsed); {@link #submittedAt} until told. */
    private long receivedAt = submittedAt;
    private volatile long firstTokenAt;

    private Generation(ServedModel model, boolean chat, boolean stream, int[] prompt, GenerationOptions options,
                       ChatPrompt chatPrompt, Map<String, java.util.Set<String>> tools) {
        this.model = model;
        this.chat = chat;
        this.stream = stream;
        this.prompt = prompt;
        this.options = options;
        this.wantLogprobs = options.topLogprobs() >= 0;
        this.pendingLogprobs = wantLogprobs ? Json.array() : null;
        this.reply = chat ? new ReplyParser(chatPrompt, tools, new ReplyParser.Listener() {
            @Override
            public void onReasoning(String text) {
                reasoning.append(text);
                emit(Json.object().put("reasoning_content", text), null);
            }

            @Override
            public void onContent(String text) {
                emitContent(text);
            }

            @Override
            public void onToolCallStart(int index, String name) {
                ToolCall call = new ToolCall("call_" + randomId(24), name, new StringBuilder());
                toolCalls.add(call);
                ObjectNode fn = Json.object().put("name", name).put("arguments", "");
                ObjectNode tc = Json.object().put("index", index).put("id", call.id()).put("type", "function");
                tc.set("function", fn);
                ObjectNode delta = Json.object();
                delta.putArray("tool_calls").add(tc);
                emit(delta, null);
            }

            @Override
            public void onToolCallArguments(int index, String fragment) {
                toolCalls.get(index).arguments().append(fragment);
                ObjectNode tc = Json.object().put("index", index);
                tc.putObject("function").put("arguments", fragment);
                ObjectNode delta = Json.object();
                delta.putArray("tool_calls").add(tc);
                emit(delta, null);
            }
        }) : null;
    }

    /** A chat completion: the messages rendered with the model's template. */
    static Generation chat(ServedModel model, ChatRequest r) {
        List<Map<String, Object>> tools = r.parsesToolCalls() ? r.tools() : null;
        ChatPrompt prompt;
        try {
            prompt = ChatPrompt.render(model.format().template(), r.messages(), tools, r.templateKwargs());
        } catch (ChatTemplateException e) {
            throw ApiException.invalid("messages", "the chat template cannot render these messages: " + e.getMessage());
        }
        if (tools != null && r.responseFormat() == ChatRequest.ResponseFormat.TEXT) {
            // without a grammar, a required call is enforced by opening it in the prompt
            if (r.toolChoice() == ChatRequest.ToolChoice.NAMED) {
                prompt = prompt.forcingCall(r.forcedFunction());
            } else if (r.toolChoice() == ChatRequest.ToolChoice.REQUIRED) {
                prompt = prompt.forcingCallOf(tools);
            }
        }
        int[] ids = model.tokenizer().encode(prompt.text());
        GenerationOptions options = options(model, ids.length, r.sampling(), r.topLogprobs(), r.responseFormat(), r.schemaGrammar());
        return new Generation(model, true, r.stream(), ids, options, prompt,
                tools == null || r.responseFormat() != ChatRequest.ResponseFormat.TEXT ? null : QwenToolCallParser.stringParameters(tools));
    }

    /** A raw completion of {@code ids}. */
    static Generation raw(ServedModel model, int[] ids, boolean stream, Sampling sampling, int topLogprobs) {
        GenerationOptions options = options(model, ids.length, sampling, topLogprobs, ChatRequest.ResponseFormat.TEXT, null);
        return new Generation(model, false, stream, ids, options, null, null);
    }

    private static GenerationOptions options(ServedModel model, int promptTokens, Sampling sampling, int topLogprobs,
                                             ChatRequest.ResponseFormat format, Grammar schemaGrammar) {
        int ctx = model.contextLength();
        if (promptTokens == 0) {
            throw ApiException.invalid("prompt", "the prompt is empty");
        }
        if (promptTokens >= ctx) {
            throw new ApiException(400, "exceed_context_size_error", "messages", "the request exceeds the available context size: "
                    + "the prompt is " + promptTokens + " tokens and the context holds " + ctx + " (prompt and reply together; see --ctx)");
        }
        int room = ctx - promptTokens;
        int max = sampling.maxTokens() == null ? room : Math.min(sampling.maxTokens(), room); // clamped to the context
        try {
            GenerationOptions.Builder b = sampling.apply(model.engine().defaultGenerationOptions(), max)
                    .addStopTokenIds(model.format().stopTokenIds())
                    .topLogprobs(topLogprobs);
            if (schemaGrammar != null) {
                b.constraint(GrammarConstraint.factory(schemaGrammar, model.grammarVocabulary()));
            } else if (format != ChatRequest.ResponseFormat.TEXT) {
                byte[][] vocabulary = model.vocabularyBytes();
                boolean[] plain = model.plainTokens();
                b.constraint(() -> new JsonObjectConstraint(vocabulary, plain));
            }
            return b.build();
        } catch (EdgeLmException e) {
            throw ApiException.invalid(null, e.getMessage());
        }
    }

    int promptTokens() {
        return prompt.length;
    }

    /** The {@link System#nanoTime()} at which the request arrived, for the server-side time to first token. */
    Generation receivedAt(long nanos) {
        if (nanos != 0 && nanos <= submittedAt) {
            receivedAt = nanos;
        }
        return this;
    }

    /** Submits to the backend; {@link GenerationBackend.QueueFullException} when it is full. */
    void start() {
        ServedModel.Boundaries at = model.boundaries(prompt);
        handle = model.backend().submit(new GenerationBackend.Request(prompt, at.cuts(), options,
                model.decoder(), new GenerationListener() {
                    @Override
                    public void onLogprobs(TokenLogprobs lp) {
                        pendingLogprobs.add(logprob(lp));
                    }

                    @Override
                    public void onToken(int id) {
                        if (firstTokenAt == 0) {
                            firstTokenAt = System.nanoTime();
                        }
                    }

                    @Override
                    public void onText(String piece) {
                        if (reply != null) {
                            reply.push(piece);
                        } else {
                            emitContent(piece);
                        }
                    }
                }, at.later()));
        Thread.ofVirtual().name("edgelm-join").start(this::awaitEnd);
    }

    private void awaitEnd() {
        GenerationResult result = null;
        RuntimeException failure = null;
        try {
            result = handle.join();
            if (reply != null) {
                reply.finish();
            }
            if (wantLogprobs && !pendingLogprobs.isEmpty()) {
                emit(null, ""); // the tokens of text held back (an unfinished stop string) still get their entries
            }
        } catch (RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            failure = new IllegalStateException("interrupted");
        }
        ended = true;
        events.add(new End(result, failure));
    }

    /** The next part or the {@link End}; null after {@code timeoutMillis} without one. */
    Object next(long timeoutMillis) throws InterruptedException {
        return events.poll(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** Waits for the end (non-streaming requests). */
    End await() throws InterruptedException {
        while (true) {
            Object e = events.take();
            if (e instanceof End end) {
                return end;
            }
        }
    }

    void cancel() {
        if (handle != null) {
            handle.cancel();
        }
    }

    boolean ended() {
        return ended;
    }

    private void emitContent(String text) {
        if (chat) {
            content.append(text);
            emit(Json.object().put("content", text), null);
        } else {
            content.append(text);
            emit(null, text);
        }
    }

    private void emit(ObjectNode delta, String text) {
        ArrayNode lps = null;
        if (wantLogprobs) {
            lps = pendingLogprobs;
            allLogprobs.addAll(lps);
            pendingLogprobs = Json.array();
        }
        if (stream) {
            events.add(new Part(delta, text, lps));
        }
    }

    private ObjectNode logprob(TokenLogprobs lp) {
        ObjectNode o = entry(lp.token(), lp.logprob());
        ArrayNode top = o.putArray("top_logprobs");
        for (int i = 0; i < lp.topIds().length; i++) {
            top.add(entry(lp.topIds()[i], lp.topLogprobs()[i]));
        }
        return o;
    }

    private ObjectNode entry(int id, float logprob) {
        ObjectNode o = Json.object();
        o.put("id", id);
        String piece = model.pieceOrNull(id);
        o.put("token", piece != null ? piece : model.tokenizer().hasToken(id) ? model.tokenizer().decode(new int[] {id}, false) : "");
        o.put("logprob", Float.isFinite(logprob) ? logprob : -Float.MAX_VALUE); // JSON has no infinity
        ArrayNode bytes = o.putArray("bytes");
        for (byte b : model.bytes(id)) {
            bytes.add(b & 0xff);
        }
        return o;
    }

    String reasoning() {
        return reasoning.toString();
    }

    String content() {
        return content.toString();
    }

    List<ToolCall> toolCalls() {
        return toolCalls;
    }

    ArrayNode logprobs() {
        return wantLogprobs ? allLogprobs : null;
    }

    int cachedTokens() {
        return handle == null ? 0 : handle.cachedTokens();
    }

    /** llama-server's rule: "length" unless a stop token or string ended it; then "tool_calls" if any were parsed. */
    String finishReason(GenerationResult r) {
        if (r.reason() == StopReason.MAX_TOKENS || r.reason() == StopReason.CONTEXT_FULL) {
            return "length";
        }
        return toolCalls.isEmpty() ? "stop" : "tool_calls";
    }

    ObjectNode usage(GenerationResult r) {
        ObjectNode u = Json.object();
        u.put("completion_tokens", r.tokens().length);
        u.put("prompt_tokens", prompt.length);
        u.put("total_tokens", prompt.length + r.tokens().length);
        u.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens());
        return u;
    }

    /** llama-server's {@code timings} (the prompt time here includes any wait in the queue). */
    ObjectNode timings(GenerationResult r) {
        long end = System.nanoTime();
        long first = firstTokenAt == 0 ? end : firstTokenAt;
        double promptMs = (first - submittedAt) / 1e6;
        double predictedMs = (end - first) / 1e6;
        int cached = cachedTokens();
        int promptN = prompt.length - cached;
        int predictedN = r.tokens().length;
        ObjectNode t = Json.object();
        t.put("cache_n", cached);
        t.put("prompt_n", promptN);
        t.put("prompt_ms", promptMs);
        t.put("prompt_per_token_ms", promptN > 0 ? promptMs / promptN : 0);
        t.put("prompt_per_second", promptMs > 0 ? promptN * 1000 / promptMs : 0);
        t.put("predicted_n", predictedN);
        t.put("predicted_ms", predictedMs);
        t.put("predicted_per_token_ms", predictedN > 0 ? predictedMs / predictedN : 0);
        t.put("predicted_per_second", predictedMs > 0 ? predictedN * 1000 / predictedMs : 0);
        // not llama-server's: where the time to the first token went, measured here from the request's arrival
        long admitted = handle == null ? 0 : handle.admittedAtNanos();
        t.put("request_ms", (submittedAt - receivedAt) / 1e6); // body read and parsed, template, tokenizer
        t.put("queue_ms", admitted == 0 ? 0 : Math.max(0, admitted - submittedAt) / 1e6);
        t.put("prefill_chunks", handle == null ? 0 : handle.prefillChunks());
        t.put("first_token_ms", firstTokenAt == 0 ? 0 : (firstTokenAt - receivedAt) / 1e6);
        return t;
    }

    static String randomId(int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(ALPHANUMERIC.charAt(RANDOM.nextInt(ALPHANUMERIC.length())));
        }
        return sb.toString();
    }
}
