package dev.edgelm.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The short-question sanity gate: each question asked on its own (greedy, thinking off) or all of them in one
 * prompt ({@link #composite}); an answer is right when its expected pattern (a regular expression, case
 * ignored) occurs in it.
 */
public final class Questions {
    private Questions() {}

    public record Question(String question, Pattern expected) {}

    public record Answer(int number, String question, String expected, String answer, boolean correct) {}

    public record Result(boolean composite, List<Answer> answers, String compositeReply, boolean complete) {
        public long correct() {
            return answers.stream().filter(Answer::correct).count();
        }
    }

    /** The 8 questions shipped with EdgeLM (facts, arithmetic, units, a one-word answer, ...). */
    public static List<Question> defaults() {
        try (InputStream in = Questions.class.getResourceAsStream("questions.jsonl")) {
            return parse(Jsonl.read(in, "the built-in questions"), "the built-in questions");
        } catch (IOException e) {
            throw new IllegalStateException("the built-in questions are missing", e);
        }
    }

    public static List<Question> read(Path file) {
        return parse(Jsonl.read(file), file.toString());
    }

    private static List<Question> parse(List<JsonNode> lines, String where) {
        List<Question> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String w = where + " question " + (i + 1);
            String q = Jsonl.text(lines.get(i), "question", w);
            String a = Jsonl.text(lines.get(i), "answer", w);
            try {
                out.add(new Question(q, Pattern.compile(a, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)));
            } catch (PatternSyntaxException e) {
                throw new EdgeLmException(w + ": \"answer\" is not a regular expression: " + e.getDescription());
            }
        }
        if (out.isEmpty()) {
            throw new EdgeLmException(where + ": no questions");
        }
        return out;
    }

    public static boolean matches(Question q, String answer) {
        return q.expected().matcher(answer).find();
    }

    /** The one prompt that asks every question: numbered, one answer line each. */
    public static String compositePrompt(List<Question> questions) {
        StringBuilder sb = new StringBuilder("Answer each question briefly. Write one line per answer, numbered like the questions.\n\n");
        for (int i = 0; i < questions.size(); i++) {
            sb.append(i + 1).append(". ").append(questions.get(i).question()).append('\n');
        }
        return sb.toString();
    }

    private static final Pattern NUMBERED = Pattern.compile("^\\s*(?:\\*\\*)?(\\d+)(?:\\*\\*)?\\s*[.):]\\s*(.*)$");

    /** The numbered answer lines of a composite reply: number -> text (the first line with a number wins). */
    public static Map<Integer, String> splitNumbered(String reply) {
        Map<Integer, String> out = new HashMap<>();
        for (String line : reply.split("\\R")) {
            Matcher m = NUMBERED.matcher(line);
            if (m.matches()) {
                out.putIfAbsent(Integer.parseInt(m.group(1)), m.group(2).strip());
            }
        }
        return out;
    }

    /** Scores each question against the line of its number in a composite reply (a missing line is wrong). */
    public static List<Answer> scoreComposite(List<Question> questions, String reply) {
        Map<Integer, String> lines = splitNumbered(reply);
        List<Answer> out = new ArrayList<>();
        for (int i = 0; i < questions.size(); i++) {
            String a = lines.getOrDefault(i + 1, "");
            out.add(new Answer(i + 1, questions.get(i).question(), questions.get(i).expected().pattern(), a,
                    !a.isEmpty() && matches(questions.get(i), a)));
        }
        return out;
    }

    public static Result run(Engine engine, ChatFormat format, List<Question> questions, boolean composite, int maxTokens,
                             Progress progress, Stop stop) {
        GenerationOptions opts = GenerationOptions.builder().maxNewTokens(maxTokens).build();
        if (composite) {
            progress.update(0, 1, "prompts");
            String reply = ask(engine, format, compositePrompt(questions), opts, stop);
            progress.update(1, 1, "prompts");
            return new Result(true, scoreComposite(questions, reply), reply, !stop.requested());
        }
        List<Answer> out = new ArrayList<>();
        progress.update(0, questions.size(), "questions");
        for (int i = 0; i < questions.size() && !stop.requested(); i++) {
            Question q = questions.get(i);
            String a = ask(engine, format, q.question(), opts, stop);
            if (stop.requested()) {
                break; // a cancelled answer is not scored
            }
            out.add(new Answer(i + 1, q.question(), q.expected().pattern(), a, matches(q, a)));
            progress.update(out.size(), questions.size(), "questions");
        }
        return new Result(false, out, null, out.size() == questions.size());
    }

    /** One user message through the chat template, greedy, thinking off, at most {@code maxTokens}: the answer text. */
    public static String ask(Engine engine, ChatFormat format, String text, int maxTokens) {
        return ask(engine, format, text, GenerationOptions.builder().maxNewTokens(maxTokens).build(), Stop.never());
    }

    /** One user message through the chat template, greedy, thinking off: the answer text ({@code stop} cancels it). */
    public static String ask(Engine engine, ChatFormat format, String text, GenerationOptions opts, Stop stop) {
        Conversation c = Conversation.start(engine, format);
        c.setThinking(false);
        Runnable unregister = stop.onRequest(c::cancel);
        try {
            return c.send(text, opts, ChatListener.NONE).answer();
        } finally {
            unregister.run();
        }
    }
}
