package dev.edgelm.cli;

import dev.edgelm.util.EdgeLmException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;

/**
 * The read loop of the interactive chat, the same whether the model runs in this process ({@link ChatRepl}) or on a
 * server ({@link RemoteChatRepl}): the {@code >>> } prompt, {@code """} multi-line messages, {@code /} commands,
 * Ctrl+C dropping the line and Ctrl+D leaving.
 */
final class ReplLoop {
    static final String PROMPT = ">>> ";
    static final String CONTINUATION = "... ";
    static final String LEAVE_HINT = "(to leave: /bye or Ctrl+D)";

    /** What a chat does with the lines the loop reads. */
    interface Chat {
        /** Before the first command or message is acted on (a warm-up still running stops here). */
        default void beforeInput() {}

        /** Runs a {@code /} command; false to leave. */
        boolean command(String line, PrintWriter out);

        /** Sends a message and prints the reply. */
        void message(String text, PrintWriter out);
    }

    private ReplLoop() {}

    /** Prints {@code banner}, then reads and dispatches lines until {@code /bye}, Ctrl+D or a command says stop. */
    static void run(Terminal terminal, String banner, Chat chat) {
        LineReader reader;
        try {
            reader = new ChatLineReader(terminal, "edgelm");
        } catch (java.io.IOException e) {
            throw new EdgeLmException("cannot open the terminal: " + e.getMessage());
        }
        PrintWriter out = terminal.writer();
        out.println(banner);
        out.flush();
        while (true) {
            String line;
            try {
                line = reader.readLine(PROMPT);
            } catch (UserInterruptException e) {
                if (e.getPartialLine() == null || e.getPartialLine().isBlank()) {
                    out.println(LEAVE_HINT);
                    out.flush();
                }
                continue; // Ctrl+C at the prompt: the line is dropped
            } catch (EndOfFileException e) {
                break;
            }
            String stripped = line.strip();
            if (stripped.isEmpty()) {
                continue;
            }
            if (stripped.startsWith("\"\"\"")) {
                String message = multiLine(reader, stripped.substring(3));
                if (message == null) {
                    continue;
                }
                chat.beforeInput();
                if (!message.isBlank()) {
                    chat.message(message, out);
                }
                continue;
            }
            chat.beforeInput();
            if (stripped.startsWith("/")) {
                if (!chat.command(stripped, out)) {
                    break;
                }
                continue;
            }
            chat.message(stripped, out);
        }
        out.flush();
    }

    /** The lines up to the closing {@code """}; null when Ctrl+C or Ctrl+D ends them first. */
    static String multiLine(LineReader reader, String first) {
        List<String> lines = new ArrayList<>();
        String current = first;
        while (true) {
            int close = current.indexOf("\"\"\"");
            if (close >= 0) {
                lines.add(current.substring(0, close));
                return String.join("\n", lines).strip();
            }
            lines.add(current);
            try {
                current = reader.readLine(CONTINUATION);
            } catch (UserInterruptException | EndOfFileException e) {
                return null;
            }
        }
    }
}
