package dev.edgelm.chat;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A multi-turn chat with a model: the messages, the {@link Session} that holds the model state, and snapshots of
 * that state. Not thread-safe, except {@link #cancel()}.
 *
 * <h2>Turns without re-reading the history</h2>
 * Each turn renders the whole conversation with the model's chat template and encodes it, exactly as a fresh
 * start would. The state is then reused for the longest common token prefix of what it holds and the new render;
 * only the rest is prefilled. A chat template may render earlier turns differently from how they were generated
 * (Qwen3.5's drops an earlier reply's think block and trims it), so the state may hold tokens past the common
 * prefix. Attention keys and values can be cut back, but the linear-attention state cannot: the state returns to
 * the latest snapshot at or before the common prefix ({@link Session#rollback}), or, if there is none, starts
 * over. Snapshots are taken where a next turn is likely to diverge: where a probe render of one more exchange
 * leaves this turn's prompt (for Qwen3.5: right after {@code <|im_start|>assistant\n}), at the end of the prompt,
 * and at the end of the reply.
 *
 * <h2>Replies</h2>
 * Generation stops at the format's stop tokens ({@link ChatFormat#stopTokenIds()}, e.g. {@code <|im_end|>} and
 * {@code <|endoftext|>}) besides any in the options. The decoded reply is stored in the history as generated (the
 * template trims it when it renders it again); a reply with a think block is stored as {@code reasoning_content}
 * and {@code content}. A cancelled reply is kept as far as it got.
 */
public final class Conversation {
    /** Snapshots kept (each holds the fixed-size model state: about 20 MB for Qwen3.5-0.8B). */
    private static final int MAX_SNAPSHOTS = 4;
    /** Stand-in texts of the probe render that predicts where the next turn will differ from this one. */
    private static final String PROBE_TEXT = "ok";

    private final ChatFormat format;
    private final Session session;
    private final TokenDecoder decoder;
    private final List<Map<String, Object>> messages;
    private final List<Session.Checkpoint> snapshots;
    private String system;
    private boolean thinking;
    private boolean allowSpecial;
    private volatile boolean generating;

    /** A conversation on a new session of {@code engine}. */
    public static Conversation start(Engine engine, ChatFormat format) {
        return new Conversation(engine.newSession(), format);
    }

    /** A conversation on {@code session} (which it resets). Thinking is off, as on-device chat usually runs. */
    public Conversation(Session session, ChatFormat format) {
        this.format = format;
        this.session = session;
        this.decoder = () -> {
            IncrementalDecoder d = format.tokenizer().newDecoder(true);
            return new TokenDecoder.Stream() {
                @Override
                public String next(int id) {
                    // a model's padding rows (ids past the vocabulary) can be sampled: they have no text
                    return format.tokenizer().hasToken(id) ? d.accept(id) : "";
                }

                @Override
                public String finish() {
                    return d.finish();
                }
            };
        };
        this.messages = new ArrayList<>();
        this.snapshots = new ArrayList<>();
        format.template(); // a model without a chat template cannot chat: say so now
        session.reset();
    }

    private Conversation(Conversation other) {
        this.format = other.format;
        this.session = other.session.fork();
        this.decoder = other.decoder;
        this.messages = new ArrayList<>(other.messages);
        this.snapshots = new ArrayList<>(other.snapshots); // checkpoints are never modified: sharing them is safe
        this.system = other.system;
        this.thinking = other.thinking;
        this.allowSpecial = other.allowSpecial;
    }

    /**
     * Whether special-token texts such as {@code <|im_start|>} written in a user's message become those tokens.
     * Off by default: a user's message (and a document pasted or piped into it) is encoded with them as plain text,
     * so it cannot fake turns or end the prompt; the template's own tokens stay tokens.
     */
    public void setAllowSpecial(boolean on) {
        this.allowSpecial = on;
    }

    /** Sets the system prompt (null for none). It takes effect at the next turn. */
    public void setSystem(String prompt) {
        this.system = prompt;
    }

    public String system() {
        return system;
    }

    /** Thinking on or off (the template's {@code enable_thinking}); off by default. */
    public void setThinking(boolean on) {
        this.thinking = on;
    }

    public boolean thinking() {
        return thinking;
    }

    /** Sends a user message and generates the reply. */
    public Reply send(String userText, GenerationOptions options, ChatListener listener) {
        return send(Map.of("role", "user", "content", userText), options, listener);
    }

    /**
     * Sends a message (OpenAI / Hugging Face shape, e.g. {@code {"role": "user", "content": "..."}}) and generates
     * the reply. If the turn does not fit in the context, fails with an {@link EdgeLmException} saying how many
     * tokens it needs and the conversation stays as it was.
     */
    public Reply send(Map<String, ?> message, GenerationOptions options, ChatListener listener) {
        List<Map<String, Object>> next = new ArrayList<>(rendered());
        next.add(Map.copyOf(message));
        String prompt = format.template().render(next, null, true, kwargs());
        int[] ids = encode(next, prompt);
        int reply = options.maxNewTokens().orElse(1);
        if ((long) ids.length + reply > session.capacity()) {
            throw new EdgeLmException("this turn does not fit in the context: it needs " + ((long) ids.length + reply)
                    + " tokens (the conversation renders to " + ids.length + (options.maxNewTokens().isPresent()
                    ? ", plus up to " + reply + " for the reply" : ", plus at least one for the reply")
                    + ") but the context holds " + session.capacity());
        }
        int probe = probeBoundary(next, ids);
        Reuse reuse = null;
        try {
            reuse = reuse(ids);
            listener.onPrefill(ids.length - reuse.kept);
            session.clearCancel(); // a cancel that arrived after the previous turn ended must not stop this one
            generating = true;
            try {
                prefill(ids, reuse.kept, probe);
            } finally {
                generating = false;
            }
            return generate(next, prompt, ids, reuse, options, listener);
        } catch (Session.Cancelled e) {
            // stopped during the prompt: the state holds a prefix of it, which the next turn reuses
            return new Reply("", "", "", new int[0], StopReason.CANCELLED, ids.length, reuse.kept,
                    session.tokens().length - reuse.kept, reuse.rolledBack, -1);
        } catch (RuntimeException e) {
            // the state may be half-way: forget it rather than risk using it
            session.reset();
            snapshots.clear();
            throw e;
        }
    }

    /** How a turn starts: {@code kept} tokens of the state reused, after a rollback to a snapshot or not. */
    private record Reuse(int kept, boolean rolledBack) {}

    /** Returns the state to the longest reusable prefix of {@code ids}. */
    private Reuse reuse(int[] ids) {
        int[] held = session.tokens();
        int common = Math.min(commonPrefix(held, ids), ids.length - 1); // at least one token to prefill
        if (common == held.length) {
            return new Reuse(common, false);
        }
        Session.Checkpoint best = null;
        for (Session.Checkpoint s : snapshots) {
            if (s.length() <= common && (best == null || s.length() > best.length())) {
                best = s;
            }
        }
        if (best == null) {
            session.reset();
            snapshots.clear();
            return new Reuse(0, false);
        }
        session.rollback(best);
        int kept = best.length();
        snapshots.removeIf(s -> s.length() > kept);
        return new Reuse(kept, true);
    }

    /** Prefills {@code ids[start..]}, stopping at {@code probe} to take a snapshot there, and at the end. */
    private void prefill(int[] ids, int start, int probe) {
        int from = start;
        if (probe > from && probe < ids.length) {
            session.prefill(Arrays.copyOfRange(ids, from, probe));
            snapshot();
            from = probe;
        }
        session.prefill(Arrays.copyOfRange(ids, from, ids.length));
        snapshot();
    }

    private Reply generate(List<Map<String, Object>> next, String prompt, int[] ids, Reuse reuse,
                           GenerationOptions options, ChatListener listener) {
        ThinkingSplitter splitter = new ThinkingSplitter(endsInsideThink(prompt), listener);
        GenerationOptions withStops = options.toBuilder().addStopTokenIds(format.stopTokenIds()).build();
        GenerationResult r;
        generating = true;
        try {
            r = session.generate(withStops, decoder, new GenerationListener() {
                @Override
                public void onToken(int id) {
                    listener.onToken(id);
                }

                @Override
                public void onText(String piece) {
                    splitter.push(piece);
                }
            });
        } finally {
            generating = false;
        }
        splitter.finish();
        snapshot();
        Map<String, Object> assistant = new LinkedHashMap<>();
        assistant.put("role", "assistant");
        if (splitter.sawThinking()) {
            assistant.put("reasoning_content", splitter.thinking());
            assistant.put("content", splitter.answer());
        } else {
            assistant.put("content", r.text());
        }
        messages.add(next.getLast());
        messages.add(assistant);
        return new Reply(r.text(), splitter.thinking(), splitter.sawThinking() ? splitter.answer() : r.text(), r.tokens(),
                r.reason(), ids.length, reuse.kept, ids.length - reuse.kept, reuse.rolledBack, r.seed());
    }

    /**
     * Where this turn's prompt and a render with one more exchange part: the tokens up to there will likely be the
     * same next turn. -1 when the probe cannot be rendered.
     */
    private int probeBoundary(List<Map<String, Object>> next, int[] ids) {
        List<Map<String, Object>> probe = new ArrayList<>(next);
        probe.add(Map.of("role", "assistant", "content", PROBE_TEXT));
        probe.add(Map.of("role", "user", "content", PROBE_TEXT));
        try {
            return commonPrefix(encode(probe, format.template().render(probe, null, true, kwargs())), ids);
        } catch (EdgeLmException e) {
            return -1;
        }
    }

    /**
     * The ids of a rendered prompt: the user messages' special-token texts as plain text unless allowed. The
     * messages' content is found in the render in order; a template that rewrote such a message cannot be
     * encoded safely and is an error.
     */
    private int[] encode(List<Map<String, Object>> msgs, String prompt) {
        if (allowSpecial) {
            return format.tokenizer().encode(prompt);
        }
        List<Integer> ranges = new ArrayList<>();
        int cursor = 0;
        for (Map<String, Object> m : msgs) {
            if (!"user".equals(m.get("role")) || !(m.get("content") instanceof String content) || content.isEmpty()) {
                continue;
            }
            int at = prompt.indexOf(content, cursor);
            if (at < 0) {
                if (format.tokenizer().containsSpecialText(content)) {
                    throw new EdgeLmException("a user message contains special-token text (such as <|im_start|>) that the "
                            + "chat template rewrote, so it cannot be kept as plain text; remove it or allow special tokens");
                }
                continue;
            }
            ranges.add(at);
            ranges.add(at + content.length());
            cursor = at + content.length();
        }
        return format.tokenizer().encode(prompt, ranges.stream().mapToInt(Integer::intValue).toArray());
    }

    private void snapshot() {
        Session.Checkpoint c = session.checkpoint();
        snapshots.removeIf(s -> s.length() == c.length());
        snapshots.add(c);
        while (snapshots.size() > MAX_SNAPSHOTS) {
            snapshots.removeFirst();
        }
    }

    /** Stops the reply being generated (from any thread); the turn ends with {@link StopReason#CANCELLED}. */
    public void cancel() {
        if (generating) {
            session.cancel();
        }
    }

    /** A copy that continues independently (model state, history and snapshots). */
    public Conversation fork() {
        return new Conversation(this);
    }

    /**
     * Replaces the history with {@code history} (user and assistant messages, no system message: that is
     * {@link #setSystem}), as a saved chat is loaded. The model state starts over; the next turn reads it all.
     */
    public void restore(List<Map<String, Object>> history) {
        for (Map<String, Object> m : history) {
            Object role = m.get("role");
            if (!"user".equals(role) && !"assistant".equals(role) && !"tool".equals(role)) {
                throw new EdgeLmException("a saved message has role '" + role + "' (expected user, assistant or tool)");
            }
        }
        reset();
        for (Map<String, Object> m : history) {
            messages.add(java.util.Collections.unmodifiableMap(new LinkedHashMap<>(m)));
        }
    }

    /**
     * Writes the model state for {@link #restoreState}: the state as far as the next turn will read it the same
     * way (the template may render the last reply differently from how it was generated; then the latest
     * snapshot before that point is written).
     */
    public void saveState(java.io.OutputStream out) throws java.io.IOException {
        List<Map<String, Object>> probe = new ArrayList<>(rendered());
        probe.add(Map.of("role", "user", "content", PROBE_TEXT));
        int[] next;
        try {
            next = format.tokenizer().encode(format.template().render(probe, null, true, kwargs()));
        } catch (EdgeLmException e) {
            next = new int[0];
        }
        int[] held = session.tokens();
        int common = commonPrefix(held, next);
        if (common == held.length) {
            session.save(out);
            return;
        }
        Session copy = session.fork();
        Session.Checkpoint best = null;
        for (Session.Checkpoint c : snapshots) {
            if (c.length() <= common && (best == null || c.length() > best.length())) {
                best = c;
            }
        }
        if (best != null) {
            copy.rollback(best);
        } else {
            copy.reset();
        }
        copy.save(out);
    }

    /**
     * After {@link #restore}: the model state a {@link Session#save} wrote at the end of that history, so that
     * the next turn continues from it instead of reading the history again.
     */
    public void restoreState(java.io.InputStream in) throws java.io.IOException {
        snapshots.clear();
        session.restore(in);
        snapshot();
    }

    /** Forgets the history (the system prompt and thinking setting stay) and the model state. */
    public void reset() {
        messages.clear();
        snapshots.clear();
        session.reset();
    }

    /** The history as rendered: system prompt (if any), then user and assistant messages. */
    public List<Map<String, Object>> messages() {
        return List.copyOf(rendered());
    }

    /** The session holding the model state (counters: {@link Session#tokensPrefilled()}). */
    public Session session() {
        return session;
    }

    public ChatFormat format() {
        return format;
    }

    /** Number of state snapshots held. */
    public int snapshotCount() {
        return snapshots.size();
    }

    private List<Map<String, Object>> rendered() {
        if (system == null) {
            return messages;
        }
        List<Map<String, Object>> all = new ArrayList<>(messages.size() + 1);
        all.add(Map.of("role", "system", "content", system));
        all.addAll(messages);
        return all;
    }

    private Map<String, Object> kwargs() {
        return Map.of("enable_thinking", thinking);
    }

    private static boolean endsInsideThink(String prompt) {
        return prompt.lastIndexOf(ThinkingSplitter.OPEN) > prompt.lastIndexOf(ThinkingSplitter.CLOSE);
    }

    private static int commonPrefix(int[] a, int[] b) {
        int i = Arrays.mismatch(a, b);
        return i < 0 ? a.length : i;
    }
}
