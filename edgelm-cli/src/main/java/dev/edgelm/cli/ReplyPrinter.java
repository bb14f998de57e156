package dev.edgelm.cli;

import dev.edgelm.chat.ChatListener;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.IntConsumer;
import java.util.function.UnaryOperator;

/**
 * Streams a reply to the console. The model's thinking is framed with words ("Thinking..." before it,
 * "...done thinking." after it), styled (dim on a terminal that takes colours), and written to its own stream: the
 * terminal in a chat, standard error for a one-shot answer (so that standard output holds the answer only), or
 * nowhere ({@code --hide-thinking}). Also times the reply (for {@code --verbose}, {@code /stats} and {@code --json})
 * and notices a closed standard output ({@code | head}): then it calls {@code onClosed}, which stops generation.
 */
final class ReplyPrinter implements ChatListener {
    /** ANSI faint on, normal intensity. */
    static final UnaryOperator<String> ANSI_DIM = s -> "\033[2m" + s + "\033[22m";
    static final String THINKING = "Thinking...";
    static final String DONE_THINKING = "...done thinking.";

    private final PrintWriter out;
    private final PrintWriter thinkingOut;
    private final UnaryOperator<String> thinkingStyle;
    private final Runnable onClosed;
    private final boolean stream;
    private IntConsumer prefillHint = n -> { };
    private Runnable firstToken = () -> { };
    private boolean thinking;
    private boolean thinkingClosed;
    private boolean answer;
    private boolean closed;
    private final StringBuilder thinkingText = new StringBuilder();
    private final StringBuilder answerText = new StringBuilder();
    final Timings timings = new Timings();

    /**
     * @param out           where the answer goes
     * @param thinkingOut   where the thinking goes (may be {@code out}), or null to hide it
     * @param thinkingStyle how thinking text is styled
     * @param onClosed      called once when {@code out} can no longer be written (a closed pipe)
     * @param stream        false to collect the reply without printing it ({@code --json})
     */
    ReplyPrinter(PrintWriter out, PrintWriter thinkingOut, UnaryOperator<String> thinkingStyle, Runnable onClosed,
                 boolean stream) {
        this.out = out;
        this.thinkingOut = thinkingOut;
        this.thinkingStyle = thinkingStyle;
        this.onClosed = onClosed;
        this.stream = stream;
    }

    /** Shows {@code hint} the number of tokens about to be read, and calls {@code done} at the first token. */
    ReplyPrinter withPrefillFeedback(IntConsumer hint, Runnable done) {
        this.prefillHint = hint;
        this.firstToken = done;
        return this;
    }

    @Override
    public void onPrefill(int tokens) {
        timings.prefillTokens = tokens;
        prefillHint.accept(tokens);
    }

    @Override
    public void onToken(int id) {
        long now = System.nanoTime();
        if (timings.firstTokenNanos == 0) {
            timings.firstTokenNanos = now;
            firstToken.run();
        }
        timings.lastTokenNanos = now;
        timings.tokens++;
    }

    @Override
    public void onThinking(String text) {
        thinkingText.append(text);
        if (!stream || thinkingOut == null) {
            return;
        }
        if (!thinking) {
            thinkingOut.print(THINKING + "\n");
        }
        thinking = true;
        thinkingOut.print(thinkingStyle.apply(text));
        thinkingOut.flush();
    }

    @Override
    public void onAnswer(String text) {
        answerText.append(text);
        if (!stream) {
            return;
        }
        closeThinking("\n\n");
        out.print(text);
        out.flush();
        answer = true;
        if (!closed && out.checkError()) {
            closed = true;
            onClosed.run();
        }
    }

    private void closeThinking(String after) {
        if (thinking && !thinkingClosed && thinkingOut != null) {
            thinkingOut.print("\n" + DONE_THINKING + after);
            thinkingOut.flush();
            thinkingClosed = true;
        }
    }

    /** Ends the reply's line. */
    void end() {
        timings.endNanos = System.nanoTime();
        if (!stream) {
            return;
        }
        closeThinking("\n");
        out.println();
        out.flush();
        if (!closed && out.checkError()) {
            closed = true;
            onClosed.run();
        }
    }

    /** Whether standard output was found closed. */
    boolean outputClosed() {
        return closed;
    }

    String thinkingText() {
        return thinkingText.toString();
    }

    String answerText() {
        return answerText.toString();
    }

    /** When a reply's parts happened, as llama-cli's and {@code ollama run --verbose}'s timings count them. */
    static final class Timings {
        final long startNanos = System.nanoTime();
        long firstTokenNanos;
        long lastTokenNanos;
        long endNanos;
        int tokens;
        int prefillTokens;

        double ttftSeconds() {
            return firstTokenNanos == 0 ? 0 : (firstTokenNanos - startNanos) / 1e9;
        }

        double prefillTokensPerSecond() {
            double s = ttftSeconds();
            return s > 0 ? prefillTokens / s : 0;
        }

        /** Tokens after the first over the time after the first (the first token's time belongs to the prefill). */
        double decodeTokensPerSecond() {
            double s = (lastTokenNanos - firstTokenNanos) / 1e9;
            return tokens > 1 && s > 0 ? (tokens - 1) / s : 0;
        }

        double totalSeconds() {
            return ((endNanos == 0 ? System.nanoTime() : endNanos) - startNanos) / 1e9;
        }

        /** The lines of {@code --verbose} and {@code /stats}. */
        String describe(int promptTokens) {
            return String.format(Locale.ROOT, """
                    prompt tokens:        %d (%d read now, %d reused from earlier turns)
                    prefill:              %.1f tokens/s
                    time to first token:  %.3f s
                    generated tokens:     %d
                    decode:               %.1f tokens/s
                    total:                %.3f s""", promptTokens, prefillTokens, Math.max(0, promptTokens - prefillTokens),
                    prefillTokensPerSecond(), ttftSeconds(), tokens, decodeTokensPerSecond(), totalSeconds());
        }
    }
}
