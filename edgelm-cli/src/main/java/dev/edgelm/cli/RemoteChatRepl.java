package dev.edgelm.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.server.ChatClient;
import dev.edgelm.server.SamplingRange;
import dev.edgelm.util.Console;
import dev.edgelm.util.EdgeLmException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.jline.terminal.Terminal;
import org.jline.utils.AttributedString;
import org.jline.utils.AttributedStyle;

/**
 * The interactive chat of {@code edgelm run --server URL}: the same prompt, keys and commands as the local chat
 * ({@link ChatRepl}), but the conversation lives here as OpenAI messages and each turn sends the whole history to
 * the server (as every chat client does; the server's prefix cache reuses the state of the turns before, so only
 * the new message is read). Ctrl+C closes the reply's stream, which stops the generation on the server.
 */
final class RemoteChatRepl {
    static final String HELP = """
            /set              show the settings
            /set system TEXT  the system prompt (/set system alone: none)
            /set temperature T | top_k K | top_p P | min_p P | seed N | max_tokens N
            /set repeat_penalty R | presence_penalty Q | frequency_penalty F
            /set think | nothink   thinking on or off (also /think, /no-think)
            /reset            start over (the system prompt stays)
            /help             this list
            /bye              leave (also /exit or Ctrl+D)
            \"\"\"               begins and ends a message of several lines
            Ctrl+C stops a reply; at the prompt it clears the line.""";

    private final Terminal terminal;
    private final ChatClient client;
    private final String url;
    /** The request without its messages: model, sampling fields, chat_template_kwargs. */
    private final ObjectNode settings;
    private final ArrayNode history = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
    private String system;
    private final boolean color;
    private boolean verbose;

    RemoteChatRepl(Terminal terminal, ChatClient client, String url, ObjectNode settings, String system, Map<String, String> env) {
        this.terminal = terminal;
        this.client = client;
        this.url = url;
        this.settings = settings;
        this.system = system;
        this.color = Console.colorAllowed(env);
    }

    void setVerbose(boolean on) {
        verbose = on;
    }

    void run() {
        ReplLoop.run(terminal, "Chatting with " + settings.path("model").asText() + " on " + url
                + (thinking() ? ", thinking on" : "") + ". /help lists the commands, /bye or Ctrl+D exits.",
                new ReplLoop.Chat() {
                    @Override
                    public boolean command(String line, PrintWriter out) {
                        return RemoteChatRepl.this.command(line, out);
                    }

                    @Override
                    public void message(String text, PrintWriter out) {
                        reply(text, out);
                    }
                });
    }

    private boolean thinking() {
        return settings.path("chat_template_kwargs").path("enable_thinking").asBoolean(false);
    }

    /** Runs a command; false to leave. */
    private boolean command(String line, PrintWriter out) {
        String[] parts = line.split("\\s+", 2);
        String arg = parts.length > 1 ? parts[1].strip() : "";
        try {
            switch (parts[0]) {
                case "/exit", "/bye", "/quit" -> {
                    return false;
                }
                case "/reset", "/clear" -> {
                    history.removeAll();
                    out.println("(conversation cleared)");
                }
                case "/think" -> set("think", "", out);
                case "/no-think", "/nothink" -> set("nothink", "", out);
                case "/set" -> {
                    if (arg.isEmpty()) {
                        out.println(settings());
                    } else {
                        String[] kv = arg.split("\\s+", 2);
                        set(kv[0], kv.length > 1 ? kv[1].strip() : "", out);
                    }
                }
                case "/help", "/?" -> out.println(HELP);
                case "/save", "/load", "/image", "/stats" -> out.println(parts[0]
                        + " is not available with --server (the conversation is on the server's side): run the model here for it");
                default -> out.println("unknown command " + parts[0] + " (/help lists them)");
            }
        } catch (EdgeLmException e) {
            out.println("error: " + e.getMessage());
        }
        out.flush();
        return true;
    }

    private void set(String key, String value, PrintWriter out) {
        switch (key) {
            case "system" -> {
                system = value.isEmpty() ? null : value;
                out.println(value.isEmpty() ? "(no system prompt)" : "(system prompt set)");
                return;
            }
            case "think", "nothink" -> {
                settings.putObject("chat_template_kwargs").put("enable_thinking", key.equals("think"));
                out.println(key.equals("think") ? "(thinking on)" : "(thinking off)");
                return;
            }
            case "temperature", "top_p", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty" ->
                    settings.put(key, checked(key, number(key, value)));
            case "top_k", "seed" -> settings.put(key, checkedWhole(key, value));
            case "max_tokens", "num_predict" -> {
                long n = (long) number(key, value);
                if (n < 1) {
                    throw new EdgeLmException("/set " + key + ": must be at least 1, got " + value);
                }
                settings.put("max_tokens", n);
            }
            default -> throw new EdgeLmException("/set " + key + ": unknown setting (/help lists them)");
        }
        out.println("(" + key + " = " + value + ")");
    }

    /**
     * {@code v} when both a local run (the engine's own checks) and the API (its ranges, so the server does not
     * refuse every later turn with a 400) accept it for {@code key}, else an error naming the setting.
     */
    private static double checked(String key, double v) {
        if (!Double.isFinite(v)) {
            throw new EdgeLmException("/set " + key + ": must be a finite number, got " + v);
        }
        dev.edgelm.engine.GenerationOptions.Builder b = dev.edgelm.engine.GenerationOptions.builder();
        try {
            switch (key) {
                case "temperature" -> b.temperature((float) v);
                case "top_p" -> b.topP((float) v);
                case "min_p" -> b.minP((float) v);
                case "repeat_penalty" -> b.repetitionPenalty((float) v);
                case "presence_penalty" -> b.presencePenalty((float) v);
                case "frequency_penalty" -> b.frequencyPenalty((float) v);
                default -> { }
            }
        } catch (EdgeLmException e) {
            throw new EdgeLmException("/set " + key + ": " + e.getMessage());
        }
        // then the API's ranges, where they are narrower than the engine's
        SamplingRange range = SamplingRange.of(key);
        if (range != null && !range.contains(v)) {
            throw new EdgeLmException("/set " + key + ": must be between " + fmt(range.min()) + " and " + fmt(range.max())
                    + ", got " + fmt(v));
        }
        return v;
    }

    /** A whole-number setting ({@code top_k}: 0 or more, within an int; {@code seed}: any long), exactly as typed. */
    private static long checkedWhole(String key, String value) {
        long n;
        try {
            n = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new EdgeLmException("/set " + key + ": '" + value + "' is not a whole number"
                    + (key.equals("seed") ? " between " + Long.MIN_VALUE + " and " + Long.MAX_VALUE : ""));
        }
        if (key.equals("top_k")) {
            if (n < 0 || n > Integer.MAX_VALUE) {
                throw new EdgeLmException("/set top_k: must be between 0 and " + Integer.MAX_VALUE + ", got " + value);
            }
            try {
                dev.edgelm.engine.GenerationOptions.builder().topK((int) n);
            } catch (EdgeLmException e) {
                throw new EdgeLmException("/set top_k: " + e.getMessage());
            }
        }
        return n;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }

    private static double number(String key, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new EdgeLmException("/set " + key + ": '" + value + "' is not a number");
        }
    }

    private String settings() {
        StringBuilder sb = new StringBuilder("server: " + url + "\nsystem: " + (system == null ? "(none)" : system)
                + "\nthinking: " + (thinking() ? "on" : "off"));
        for (String k : new String[] {"temperature", "top_k", "top_p", "min_p", "seed", "max_tokens", "repeat_penalty",
                "presence_penalty", "frequency_penalty"}) {
            sb.append(k.equals("temperature") || k.equals("repeat_penalty") ? "\n" : ", ").append(k).append(' ')
                    .append(settings.has(k) ? settings.get(k).asText() : "(the server's)");
        }
        return sb.toString();
    }

    private void reply(String line, PrintWriter out) {
        Terminal.SignalHandler previous = terminal.handle(Terminal.Signal.INT, signal -> client.cancel());
        UnaryOperator<String> dim = color
                ? text -> new AttributedString(text, AttributedStyle.DEFAULT.faint()).toAnsi(terminal)
                : text -> text;
        ReplyPrinter printer = new ReplyPrinter(out, out, dim, client::cancel, true);
        ObjectNode body = settings.deepCopy();
        ArrayNode messages = body.putArray("messages");
        if (system != null) {
            messages.addObject().put("role", "system").put("content", system);
        }
        messages.addAll(history);
        messages.addObject().put("role", "user").put("content", line);
        try {
            ChatClient.Result r = client.chat(body, printer::onAnswer, printer::onThinking);
            printer.end();
            if ("cancelled".equals(r.finishReason())) {
                out.println("(stopped)");
            } else {
                history.addObject().put("role", "user").put("content", line);
                history.addObject().put("role", "assistant").put("content", r.content());
                if ("length".equals(r.finishReason())) {
                    out.println("(reply cut at " + r.completionTokens() + " tokens, -n / --max-tokens)");
                }
                if (verbose) {
                    out.println(describe(r));
                }
            }
        } catch (EdgeLmException e) {
            printer.end();
            out.println("error: " + e.getMessage());
        } finally {
            terminal.handle(Terminal.Signal.INT, previous);
        }
        out.flush();
    }

    /**
     * The reply's counts and times: the first text as seen here, and, when the server reports it (EdgeLM does, in
     * {@code timings}), its own time from the request's arrival to the first sampled token, which is the honest
     * first-token time for a model whose first tokens have no text (the synthetic models' stand-in tokenizer).
     */
    static String describe(ChatClient.Result r) {
        String s = String.format(Locale.ROOT, "%d prompt tokens (%d cached), %d generated, first text after %.2f s",
                r.promptTokens(), r.cachedTokens(), r.completionTokens(), r.firstTokenSeconds());
        double server = r.serverMillis("first_token_ms");
        if (server > 0) {
            s += String.format(Locale.ROOT, "; the server sampled the first token %.3f s after the request arrived "
                    + "(request %.3f s, queue %.3f s, %d prefill chunk(s))", server / 1e3, r.serverMillis("request_ms") / 1e3,
                    r.serverMillis("queue_ms") / 1e3, (int) r.serverMillis("prefill_chunks"));
        } else if (r.serverMillis("prompt_ms") >= 0) { // llama-server's (and older EdgeLM's) prompt time
            s += String.format(Locale.ROOT, "; the server's prompt_ms %.3f s", r.serverMillis("prompt_ms") / 1e3);
        }
        return s;
    }
}
