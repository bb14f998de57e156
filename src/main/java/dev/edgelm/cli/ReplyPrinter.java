package dev.edgelm.cli;

import dev.edgelm.chat.ChatListener;
import java.io.PrintWriter;
import java.util.function.UnaryOperator;

/** Streams a reply to the console: thinking text styled (dim on a terminal), a blank line, then the answer. */
final class ReplyPrinter implements ChatListener {
    /** ANSI faint on, normal intensity. */
    static final UnaryOperator<String> ANSI_DIM = s -> "\033[2m" + s + "\033[22m";

    private final PrintWriter out;
    private final UnaryOperator<String> thinkingStyle;
    private boolean thinking;
    private boolean answer;

    ReplyPrinter(PrintWriter out, UnaryOperator<String> thinkingStyle) {
        this.out = out;
        this.thinkingStyle = thinkingStyle;
    }

    @Override
    public void onThinking(String text) {
        out.print(thinkingStyle.apply(text));
        out.flush();
        thinking = true;
    }

    @Override
    public void onAnswer(String text) {
        if (thinking && !answer) {
            out.print("\n\n");
        }
        out.print(text);
        out.flush();
        answer = true;
    }

    /** Ends the reply's line. */
    void end() {
        out.println();
        out.flush();
    }
}
