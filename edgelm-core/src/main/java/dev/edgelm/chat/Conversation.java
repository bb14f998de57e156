package dev.edgelm.chat;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.model.ImageEmbedding;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.tokenizer.IncrementalDecoder;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.IdentityHashMap;
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
 *
 * <h2>Images</h2>
 * A message's content may be a list of parts; an image part ({@code {"type": "image", "image": ...}}, the value a
 * file path, the file's bytes, a {@code BufferedImage}, or preprocessed pixels) renders as the template's single
 * {@code <|image_pad|>}, which is expanded to the image's token count; the vision tower encodes each image once per
 * conversation (cached by part). Since the history only grows, a common token prefix also holds the same images;
 * a prefix never ends inside an image's run. Video parts are refused.
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
    /** Image embeddings by the part that holds the image (identity: parts stay in the history as given). */
    private final Map<Object, ImageEmbedding> encoded;
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
        this.encoded = new IdentityHashMap<>();
        format.template(); // a model without a chat template cannot chat: say so now
        session.reset();
    }

    private Conversation(Conversation other) {
        this.format = other.format;
        this.session = other.session.fork();
        this.decoder = other.decoder;
        this.messages = new ArrayList<>(other.messages);
        this.snapshots = new ArrayList<>(other.snapshots); // checkpoints are never modified: sharing them is safe
        this.encoded = new IdentityHashMap<>(other.encoded);
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

    /**
     * A user message of images (each a file {@code Path}, the file's bytes, a {@code BufferedImage} or
     * preprocessed pixels) followed by {@code text}, in the OpenAI / Hugging Face content-part shape.
     */
    public static Map<String, Object> userMessage(String text, List<?> images) {
        if (images.isEmpty()) {
            return Map.of("role", "user", "content", text);
        }
        List<Object> parts = new ArrayList<>();
        for (Object image : images) {
            parts.add(Map.of("type", "image", "image", image));
        }
        parts.add(Map.of("type", "text", "text", text));
        return Map.of("role", "user", "content", parts);
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
        refuseVideo(message);
        List<Map<String, Object>> next = new ArrayList<>(rendered());
        next.add(Map.copyOf(message));
        String prompt = format.template().render(forTemplate(next), null, true, kwargs());
        int[] rendered = encode(next, prompt);
        Images images = images(next, rendered);
        int[] ids = images.ids;
        int reply = options.maxNewTokens().orElse(1);
        if ((long) ids.length + reply > session.capacity()) {
            throw new EdgeLmException("this turn does not fit in the context: it needs " + ((long) ids.length + reply)
                    + " tokens (the conversation renders to " + ids.length + (options.maxNewTokens().isPresent()
                    ? ", plus up to " + reply + " for the reply" : ", plus at least one for the reply")
                    + ") but the context holds " + session.capacity());
        }
        int probe = images.expanded(probeBoundary(next, rendered));
        Reuse reuse = null;
        try {
            reuse = reuse(ids, images);
            listener.onPrefill(ids.length - reuse.kept);
            session.clearCancel(); // a cancel that arrived after the previous turn ended must not stop this one
            generating = true;
            try {
                prefill(ids, reuse.kept, images.outsideRun(probe) ? probe : -1, images);
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
    private Reuse reuse(int[] ids, Images images) {
        int[] held = session.tokens();
        int common = images.runStartAtOrBefore(Math.min(commonPrefix(held, ids), ids.length - 1)); // at least one token to prefill
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
    private void prefill(int[] ids, int start, int probe, Images images) {
        int from = start;
        if (probe > from && probe < ids.length) {
            session.prefill(Arrays.copyOfRange(ids, from, probe), images.within(from, probe));
            snapshot();
            from = probe;
        }
        session.prefill(Arrays.copyOfRange(ids, from, ids.length), images.within(from, ids.length));
        snapshot();
    }

    /**
     * The prompt's ids with each image's single placeholder expanded to its run, the images in order, and where
     * their runs start.
     */
    private record Images(int[] ids, List<ImageEmbedding> embeddings, int[] starts, int[] rawPads) {
        List<ImageEmbedding> within(int from, int to) {
            List<ImageEmbedding> out = new ArrayList<>();
            for (int i = 0; i < starts.length; i++) {
                if (starts[i] >= from && starts[i] < to) {
                    out.add(embeddings.get(i));
                }
            }
            return out;
        }

        /** {@code index} moved back to the start of the image run it falls inside, if any. */
        int runStartAtOrBefore(int index) {
            for (int i = 0; i < starts.length; i++) {
                if (index > starts[i] && index < starts[i] + embeddings.get(i).tokens()) {
                    return starts[i];
                }
            }
            return index;
        }

        boolean outsideRun(int index) {
            return runStartAtOrBefore(index) == index;
        }

        /** An index of the rendered (unexpanded) ids as an index of {@link #ids}. */
        int expanded(int rawIndex) {
            if (rawIndex < 0) {
                return rawIndex;
            }
            int shift = 0;
            for (int i = 0; i < rawPads.length && rawPads[i] < rawIndex; i++) {
                shift += embeddings.get(i).tokens() - 1;
            }
            return rawIndex + shift;
        }
    }

    /** Finds the image parts of {@code messages}, encodes the new ones and expands the placeholders of {@code rendered}. */
    private Images images(List<Map<String, Object>> messages, int[] rendered) {
        List<Object> parts = new ArrayList<>();
        for (Map<String, Object> m : messages) {
            if (m.get("content") instanceof Collection<?> content) {
                for (Object part : content) {
                    if (isImagePart(part)) {
                        parts.add(part);
                    }
                }
            }
        }
        if (parts.isEmpty()) {
            return new Images(rendered, List.of(), new int[0], new int[0]);
        }
        int pad = session.engine().visionTokens().imagePad();
        int[] rawPads = new int[parts.size()];
        int found = 0;
        for (int i = 0; i < rendered.length; i++) {
            if (rendered[i] == pad) {
                if (found < rawPads.length) {
                    rawPads[found] = i;
                }
                found++;
            }
        }
        if (found != parts.size()) {
            throw new EdgeLmException("the chat template rendered " + found + " image placeholder(s) for "
                    + parts.size() + " image(s)");
        }
        List<ImageEmbedding> embeddings = new ArrayList<>();
        for (Object part : parts) {
            ImageEmbedding e = encoded.get(part);
            if (e == null) {
                e = session.engine().encodeImage(imageOf((Map<?, ?>) part));
                encoded.put(part, e);
            }
            embeddings.add(e);
        }
        int total = rendered.length;
        for (ImageEmbedding e : embeddings) {
            total += e.tokens() - 1;
        }
        int[] ids = new int[total];
        int[] starts = new int[parts.size()];
        int o = 0;
        int image = 0;
        for (int id : rendered) {
            if (id == pad) {
                starts[image] = o;
                int n = embeddings.get(image++).tokens();
                Arrays.fill(ids, o, o + n, pad);
                o += n;
            } else {
                ids[o++] = id;
            }
        }
        return new Images(ids, embeddings, starts, rawPads);
    }

    /** The messages with each image part reduced to {@code {"type": "image"}}: the template sees no image objects. */
    private static List<Map<String, Object>> forTemplate(List<Map<String, Object>> messages) {
        List<Map<String, Object>> out = new ArrayList<>(messages.size());
        for (Map<String, Object> m : messages) {
            if (m.get("content") instanceof Collection<?> content && content.stream().anyMatch(Conversation::isImagePart)) {
                Map<String, Object> copy = new LinkedHashMap<>(m);
                copy.put("content", content.stream().map(p -> isImagePart(p) ? Map.of("type", "image") : p).toList());
                out.add(copy);
            } else {
                out.add(m);
            }
        }
        return out;
    }

    /** The image part test of the stock template: a part with an {@code image} or {@code image_url} key, or type image. */
    private static boolean isImagePart(Object part) {
        return part instanceof Map<?, ?> m && (m.containsKey("image") || m.containsKey("image_url") || "image".equals(m.get("type")));
    }

    private static Object imageOf(Map<?, ?> part) {
        Object v = part.containsKey("image") ? part.get("image") : part.get("image_url");
        if (v instanceof Map<?, ?> url && url.containsKey("url")) {
            v = url.get("url");
        }
        return v;
    }

    private static void refuseVideo(Map<String, ?> message) {
        if (message.get("content") instanceof Collection<?> content) {
            for (Object part : content) {
                if (part instanceof Map<?, ?> m && (m.containsKey("video") || m.containsKey("video_url") || "video".equals(m.get("type")))) {
                    throw new EdgeLmException("video content is not supported (yet): send images (type \"image\") or text");
                }
            }
        }
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
            return commonPrefix(encode(probe, format.template().render(forTemplate(probe), null, true, kwargs())), ids);
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
            if (!"user".equals(m.get("role"))) {
                continue;
            }
            for (String content : userTexts(m.get("content"))) {
                cursor = plainRange(prompt, content, cursor, ranges);
            }
        }
        return format.tokenizer().encode(prompt, ranges.stream().mapToInt(Integer::intValue).toArray());
    }

    /** The texts of a user message's content: the string itself, or each text part of a list (images beside them). */
    private static List<String> userTexts(Object content) {
        List<String> texts = new ArrayList<>();
        if (content instanceof String text) {
            texts.add(text);
        } else if (content instanceof List<?> parts) {
            for (Object part : parts) {
                if (part instanceof Map<?, ?> p && "text".equals(p.get("type")) && p.get("text") instanceof String text) {
                    texts.add(text);
                }
            }
        }
        texts.removeIf(String::isEmpty);
        return texts;
    }

    /** Marks where {@code content} sits in the prompt (searched from {@code cursor}) as plain text; the new cursor. */
    private int plainRange(String prompt, String content, int cursor, List<Integer> ranges) {
        int at = prompt.indexOf(content, cursor);
        if (at < 0) {
            if (format.tokenizer().containsSpecialText(content)) {
                throw new EdgeLmException("a user message contains special-token text (such as <|im_start|>) that the "
                        + "chat template rewrote, so it cannot be kept as plain text; remove it or allow special tokens");
            }
            return cursor;
        }
        ranges.add(at);
        ranges.add(at + content.length());
        return at + content.length();
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
        encoded.clear();
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
