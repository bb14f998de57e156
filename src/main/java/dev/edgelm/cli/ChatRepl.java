package dev.edgelm.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.Warmup;
import dev.edgelm.util.EdgeLmException;
import java.io.PrintWriter;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.utils.AttributedString;
import org.jline.utils.AttributedStyle;

/**
 * The interactive chat: a prompt with line editing and history (JLine), the reply streamed below it. Ctrl+C
 * cancels the reply in progress (at the prompt it clears the line), Ctrl+D exits. The model state is kept between
 * turns by the {@link Conversation}.
 */
final class ChatRepl {
    static final String PROMPT = ">>> ";
    static final String HELP = """
            /image F   attach the image file F to the next message (repeat for more)
            /reset     start over (the system prompt stays)
            /think     show the model's thinking before its answers
            /no-think  answer directly (the default)
            /help      this list
            /exit      leave (or Ctrl+D)
            Ctrl+C stops a reply; at the prompt it clears the line.""";

    private final Terminal terminal;
    private final Conversation conversation;
    private final GenerationOptions options;
    private final String model;
    private final Warmup warmup;
    /** Images attached to the next message (/image, or --image for the first). */
    private final List<Path> attached = new ArrayList<>();

    /** {@code warmup}: passes running while the first message is typed, stopped when it is sent. */
    ChatRepl(Terminal terminal, Conversation conversation, GenerationOptions options, String model, Warmup warmup) {
        this(terminal, conversation, options, model, warmup, List.of());
    }

    /** {@code images}: attached to the first message. */
    ChatRepl(Terminal terminal, Conversation conversation, GenerationOptions options, String model, Warmup warmup,
             List<Path> images) {
        this.attached.addAll(images);
        this.terminal = terminal;
        this.conversation = conversation;
        this.options = options;
        this.model = model;
        this.warmup = warmup;
    }

    void run() {
        LineReader reader = LineReaderBuilder.builder().terminal(terminal).appName("edgelm").build();
        PrintWriter out = terminal.writer();
        out.println("Chatting with " + model + (conversation.thinking() ? " (thinking on)" : "")
                + ". /help lists the commands, Ctrl+D exits.");
        out.flush();
        while (true) {
            String line;
            try {
                line = reader.readLine(PROMPT);
            } catch (UserInterruptException e) {
                continue; // Ctrl+C at the prompt: the line is dropped
            } catch (EndOfFileException e) {
                break;
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            warmup.close();
            if (line.startsWith("/")) {
                if (!command(line, out)) {
                    break;
                }
                continue;
            }
            reply(line, out);
        }
        out.flush();
    }

    /** Runs a command; false to leave. */
    private boolean command(String line, PrintWriter out) {
        if (line.startsWith("/image ") || line.equals("/image")) {
            String file = line.substring("/image".length()).strip();
            if (file.isEmpty()) {
                out.println("usage: /image PATH (attaches the image to your next message)");
            } else if (!Files.isRegularFile(Path.of(file))) {
                out.println("error: " + file + ": no such image file");
            } else {
                attached.add(Path.of(file));
                out.println("(image " + file + " attached to your next message" + (attached.size() > 1
                        ? ", " + attached.size() + " in all" : "") + ")");
            }
            out.flush();
            return true;
        }
        switch (line) {
            case "/exit", "/bye", "/quit" -> {
                return false;
            }
            case "/reset" -> {
                conversation.reset();
                out.println("(conversation cleared)");
            }
            case "/think" -> {
                conversation.setThinking(true);
                out.println("(thinking on)");
            }
            case "/no-think" -> {
                conversation.setThinking(false);
                out.println("(thinking off)");
            }
            case "/help", "/?" -> out.println(HELP);
            default -> out.println("unknown command " + line + " (/help lists them)");
        }
        out.flush();
        return true;
    }

    private void reply(String line, PrintWriter out) {
        Terminal.SignalHandler previous = terminal.handle(Terminal.Signal.INT, signal -> conversation.cancel());
        ReplyPrinter printer = new ReplyPrinter(out,
                text -> new AttributedString(text, AttributedStyle.DEFAULT.faint()).toAnsi(terminal));
        try {
            List<Path> images = List.copyOf(attached);
            attached.clear();
            Reply r = conversation.send(Conversation.userMessage(line, images), options, printer);
            printer.end();
            if (r.reason() == StopReason.CANCELLED) {
                out.println("(stopped)");
            } else if (r.reason() == StopReason.MAX_TOKENS) {
                out.println("(reply cut at " + r.tokens().length + " tokens, --max-tokens)");
            } else if (r.reason() == StopReason.CONTEXT_FULL) {
                out.println("(the context is full: /reset to start over, or raise --max-num-tokens)");
            }
        } catch (EdgeLmException e) {
            out.println("error: " + e.getMessage());
        } finally {
            terminal.handle(Terminal.Signal.INT, previous);
        }
        out.flush();
    }
}
