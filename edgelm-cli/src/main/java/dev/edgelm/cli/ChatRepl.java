package dev.edgelm.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.Warmup;
import dev.edgelm.hub.ModelResolver;
import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.Console;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.jline.terminal.Terminal;
import org.jline.utils.AttributedString;
import org.jline.utils.AttributedStyle;

/**
 * The interactive chat: a prompt with line editing and history (JLine), the reply streamed below it. Ctrl+C
 * cancels the reply in progress (at the prompt it clears the line, and on an empty line says how to leave), Ctrl+D
 * or /bye exits. A message may span lines between {@code """} marks. The model state is kept between turns by the
 * {@link Conversation}.
 */
final class ChatRepl {
    static final String CHAT_FORMAT = "edgelm-chat";
    static final String HELP = """
            /set              show the settings
            /set system TEXT  the system prompt (/set system alone: none)
            /set temperature T | top_k K | top_p P | min_p P | seed N | max_tokens N
            /set repeat_penalty R | presence_penalty Q | frequency_penalty F
            /set think | nothink   thinking on or off (also /think, /no-think)
            /set verbose | quiet   timings after each reply, or not
            /stats            the last reply's timings
            /save FILE        save the conversation (JSON)
            /load FILE        load a saved conversation
            /image FILE       attach an image to the next message (repeat for more)
            /reset            start over (the system prompt stays)
            /help             this list
            /bye              leave (also /exit or Ctrl+D)
            \"\"\"               begins and ends a message of several lines
            Ctrl+C stops a reply; at the prompt it clears the line.""";

    private final Terminal terminal;
    private final Conversation conversation;
    private GenerationOptions options;
    private final ModelResolver.Resolved model;
    private final Warmup warmup;
    private final boolean color;
    private boolean verbose;
    private String lastStats;
    /** Images attached to the next message (/image, or --image for the first). */
    private final List<Path> attached = new ArrayList<>();

    /** {@code warmup}: passes running while the first message is typed, stopped when it is sent. */
    ChatRepl(Terminal terminal, Conversation conversation, GenerationOptions options, ModelResolver.Resolved model,
             Warmup warmup, Map<String, String> env) {
        this.terminal = terminal;
        this.conversation = conversation;
        this.options = options;
        this.model = model;
        this.warmup = warmup;
        this.color = Console.colorAllowed(env);
    }

    /** Attaches images to the next message (--image: the first one). */
    void attach(List<Path> images) {
        attached.addAll(images);
    }

    void setVerbose(boolean on) {
        verbose = on;
    }

    void run() {
        ReplLoop.run(terminal, "Chatting with " + model.name() + " (" + model.quant() + ")"
                + (conversation.thinking() ? ", thinking on" : "") + ". /help lists the commands, /bye or Ctrl+D exits.",
                new ReplLoop.Chat() {
                    @Override
                    public void beforeInput() {
                        warmup.close();
                    }

                    @Override
                    public boolean command(String line, PrintWriter out) {
                        return ChatRepl.this.command(line, out);
                    }

                    @Override
                    public void message(String text, PrintWriter out) {
                        reply(text, out);
                    }
                });
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
                case "/image" -> {
                    if (arg.isEmpty()) {
                        out.println("usage: /image PATH (attaches the image to your next message)");
                    } else if (!Files.isRegularFile(Path.of(arg))) {
                        out.println("error: " + arg + ": no such image file");
                    } else {
                        attached.add(Path.of(arg));
                        out.println("(image " + arg + " attached to your next message" + (attached.size() > 1
                                ? ", " + attached.size() + " in all" : "") + ")");
                    }
                }
                case "/reset", "/clear" -> {
                    conversation.reset();
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
                case "/stats" -> out.println(lastStats == null ? "(no reply yet)" : lastStats);
                case "/save" -> save(arg, out);
                case "/load" -> load(arg, out);
                case "/help", "/?" -> out.println(HELP);
                default -> out.println("unknown command " + parts[0] + " (/help lists them)");
            }
        } catch (EdgeLmException e) {
            out.println("error: " + e.getMessage());
        }
        out.flush();
        return true;
    }

    private void set(String key, String value, PrintWriter out) {
        GenerationOptions.Builder b = options.toBuilder();
        switch (key) {
            case "system" -> {
                conversation.setSystem(value.isEmpty() ? null : value);
                out.println(value.isEmpty() ? "(no system prompt)" : "(system prompt set)");
                return;
            }
            case "think" -> {
                conversation.setThinking(true);
                out.println("(thinking on)");
                return;
            }
            case "nothink" -> {
                conversation.setThinking(false);
                out.println("(thinking off)");
                return;
            }
            case "verbose" -> {
                verbose = true;
                out.println("(timings after each reply)");
                return;
            }
            case "quiet" -> {
                verbose = false;
                out.println("(no timings)");
                return;
            }
            case "temperature" -> b.temperature(number(key, value));
            case "top_k" -> b.topK((int) number(key, value));
            case "top_p" -> b.topP(number(key, value));
            case "min_p" -> b.minP(number(key, value));
            case "seed" -> b.seed((long) number(key, value));
            case "max_tokens", "num_predict" -> b.maxNewTokens((int) number(key, value));
            case "repeat_penalty" -> b.repetitionPenalty(number(key, value));
            case "presence_penalty" -> b.presencePenalty(number(key, value));
            case "frequency_penalty" -> b.frequencyPenalty(number(key, value));
            default -> throw new EdgeLmException("/set " + key + ": unknown setting (/help lists them)");
        }
        options = b.build();
        out.println("(" + key + " = " + value + ")");
    }

    private static float number(String key, String value) {
        try {
            return Float.parseFloat(value);
        } catch (NumberFormatException e) {
            throw new EdgeLmException("/set " + key + ": '" + value + "' is not a number");
        }
    }

    private String settings() {
        return "system: " + (conversation.system() == null ? "(none)" : conversation.system()) + "\n"
                + "thinking: " + (conversation.thinking() ? "on" : "off") + "\n"
                + "temperature " + options.temperature() + ", top_k " + options.topK() + ", top_p " + options.topP()
                + ", min_p " + options.minP() + ", max_tokens " + (options.maxNewTokens().isPresent()
                ? options.maxNewTokens().getAsInt() : "unlimited") + ", seed " + (options.seed().isPresent()
                ? options.seed().getAsLong() : "random") + "\n"
                + "repeat_penalty " + options.repetitionPenalty() + ", presence_penalty " + options.presencePenalty()
                + ", frequency_penalty " + options.frequencyPenalty();
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** {"format": "edgelm-chat", "version": 1, "model", "system", "thinking", "messages": [...]}. */
    private void save(String file, PrintWriter out) {
        if (file.isEmpty()) {
            throw new EdgeLmException("/save needs a file name: /save chat.json");
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("format", CHAT_FORMAT);
        o.put("version", 1);
        o.put("model", model.name());
        o.put("system", conversation.system());
        o.put("thinking", conversation.thinking());
        List<Map<String, Object>> history = new ArrayList<>();
        for (Map<String, Object> m : conversation.messages()) {
            if (!"system".equals(m.get("role"))) {
                history.add(m);
            }
        }
        o.set("messages", JSON.valueToTree(history));
        Path path = Path.of(file);
        Path state = stateFile(path);
        o.put("state_file", state.getFileName().toString());
        o.put("state_model", model.path().toString());
        o.put("state_model_bytes", model.bytes());
        try {
            AtomicFiles.write(state, conversation::saveState);
            AtomicFiles.write(path, s -> s.write(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(o)));
        } catch (IOException e) {
            throw new EdgeLmException("/save " + file + ": cannot write: " + e.getMessage());
        }
        out.println("(saved " + history.size() + " messages to " + file + ", the model state to " + state + ")");
    }

    private void load(String file, PrintWriter out) {
        if (file.isEmpty()) {
            throw new EdgeLmException("/load needs a file name: /load chat.json");
        }
        JsonNode o;
        try {
            o = JSON.readTree(Files.readAllBytes(Path.of(file)));
        } catch (IOException e) {
            throw new EdgeLmException("/load " + file + ": cannot read it as JSON: " + e.getMessage());
        }
        if (o == null || !CHAT_FORMAT.equals(o.path("format").asText()) || !o.path("messages").isArray()) {
            throw new EdgeLmException("/load " + file + ": not a chat saved by /save (no \"format\": \"" + CHAT_FORMAT
                    + "\" with \"messages\")");
        }
        List<Map<String, Object>> history = JSON.convertValue(o.get("messages"), new TypeReference<>() { });
        conversation.restore(history);
        conversation.setSystem(o.path("system").isTextual() ? o.get("system").asText() : null);
        conversation.setThinking(o.path("thinking").asBoolean(false));
        Path state = stateFile(Path.of(file));
        boolean sameModel = model.path().toString().equals(o.path("state_model").asText())
                && model.bytes() == o.path("state_model_bytes").asLong(-1);
        String how = "the next reply reads them first";
        if (Files.isRegularFile(state) && sameModel) {
            try (var in = Files.newInputStream(state)) {
                conversation.restoreState(in);
                how = "the model state too: the next reply continues without reading them again";
            } catch (IOException | EdgeLmException e) {
                how = "its model state could not be used (" + e.getMessage() + "): the next reply reads them first";
            }
        } else if (Files.isRegularFile(state)) {
            how = "saved with another model file, so the next reply reads them first";
        }
        out.println("(loaded " + history.size() + " messages from " + file + "; " + how + ")");
    }

    /** Where /save puts the model state: beside the chat file, {@code chat.json.state}. */
    static Path stateFile(Path chat) {
        return chat.resolveSibling(chat.getFileName() + ".state");
    }

    private void reply(String line, PrintWriter out) {
        Terminal.SignalHandler previous = terminal.handle(Terminal.Signal.INT, signal -> conversation.cancel());
        UnaryOperator<String> dim = color
                ? text -> new AttributedString(text, AttributedStyle.DEFAULT.faint()).toAnsi(terminal)
                : text -> text;
        ReplyPrinter printer = new ReplyPrinter(out, out, dim, conversation::cancel, true);
        printer.withPrefillFeedback(n -> {
            if (n >= RunCommand.LONG_PROMPT) {
                out.print("(reading " + n + " tokens ...)");
                out.flush();
            }
        }, () -> {
            if (printer.timings.prefillTokens >= RunCommand.LONG_PROMPT) {
                out.print("\r\033[K");
                out.flush();
            }
        });
        try {
            List<Path> images = List.copyOf(attached);
            attached.clear();
            Reply r = conversation.send(Conversation.userMessage(line, images), options, printer);
            printer.end();
            lastStats = printer.timings.describe(r.promptTokens());
            if (r.reason() == StopReason.CANCELLED) {
                out.println("(stopped)");
            } else if (r.reason() == StopReason.MAX_TOKENS) {
                out.println("(reply cut at " + r.tokens().length + " tokens, -n / --max-tokens)");
            } else if (r.reason() == StopReason.CONTEXT_FULL) {
                out.println("(the context is full: /reset to start over, or raise -c / --ctx-size)");
            }
            if (verbose) {
                out.println(lastStats);
            }
        } catch (EdgeLmException e) {
            out.println("error: " + e.getMessage());
        } finally {
            terminal.handle(Terminal.Signal.INT, previous);
        }
        out.flush();
    }
}
