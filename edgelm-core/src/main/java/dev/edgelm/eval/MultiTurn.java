package dev.edgelm.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.edgelm.chat.ChatListener;
import dev.edgelm.chat.Conversation;
import dev.edgelm.chat.Reply;
import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.Session;
import dev.edgelm.template.ChatFormat;
import dev.edgelm.util.EdgeLmException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Multi-turn state reuse: each turn of a {@link Conversation} (state reused, rolled back where the template
 * re-renders history, e.g. Qwen3.5 dropping earlier think blocks) against the same turn rendered from the whole
 * history and prefilled into a fresh session. The generated tokens must be identical, and the logits after the
 * turn (its end-of-turn token fed to both states) within a tolerance.
 */
public final class MultiTurn {
    private MultiTurn() {}

    /**
     * A conversation of the input file: {@code {"system": "...", "thinking": false, "max_tokens": 16,
     * "turns": ["first user message", "second", ...]}} (system, thinking and max_tokens optional).
     */
    public record Script(String name, String system, boolean thinking, int maxTokens, List<String> turns) {}

    public record Turn(String conversation, int turn, int promptTokens, int reusedTokens, boolean rolledBack,
                       int[] reuseTokens, int[] scratchTokens, boolean tokensEqual, double maxAbsDiff, boolean clean) {}

    public record Result(List<Turn> turns, double tolerance, boolean complete) {
        public long clean() {
            return turns.stream().filter(Turn::clean).count();
        }
    }

    public static List<Script> read(Path file) {
        List<Script> out = new ArrayList<>();
        List<JsonNode> lines = Jsonl.read(file);
        for (int i = 0; i < lines.size(); i++) {
            JsonNode n = lines.get(i);
            String where = file + " conversation " + (i + 1);
            JsonNode turns = n.get("turns");
            if (turns == null || !turns.isArray() || turns.isEmpty()) {
                throw new EdgeLmException(where + ": field \"turns\" (a non-empty list of user messages) is missing");
            }
            List<String> t = new ArrayList<>();
            for (JsonNode x : turns) {
                if (!x.isTextual()) {
                    throw new EdgeLmException(where + ": \"turns\" must hold strings");
                }
                t.add(x.asText());
            }
            int max = n.path("max_tokens").asInt(16);
            if (max < 1) {
                throw new EdgeLmException(where + ": \"max_tokens\" must be >= 1");
            }
            out.add(new Script(n.path("name").asText("conversation " + (i + 1)), n.hasNonNull("system") ? n.get("system").asText() : null,
                    n.path("thinking").asBoolean(false), max, t));
        }
        if (out.isEmpty()) {
            throw new EdgeLmException(file + ": no conversations");
        }
        return out;
    }

    public static Result run(Engine engine, ChatFormat format, List<Script> scripts, double tolerance, Progress progress, Stop stop) {
        List<Turn> out = new ArrayList<>();
        int total = scripts.stream().mapToInt(s -> s.turns().size()).sum();
        progress.update(0, total, "turns");
        int stopId = format.stopTokenIds()[0];
        outer:
        for (Script s : scripts) {
            Conversation conv = Conversation.start(engine, format);
            conv.setSystem(s.system());
            conv.setThinking(s.thinking());
            GenerationOptions opts = GenerationOptions.builder().maxNewTokens(s.maxTokens()).build();
            for (int t = 0; t < s.turns().size(); t++) {
                if (stop.requested()) {
                    break outer;
                }
                List<Map<String, Object>> history = new ArrayList<>(conv.messages());
                history.add(Map.of("role", "user", "content", s.turns().get(t)));
                Reply reply = conv.send(s.turns().get(t), opts, ChatListener.NONE);
                // from scratch: the whole history rendered and prefilled into a fresh session
                int[] prompt = format.encodePrompt(history, null, true, Map.of("enable_thinking", s.thinking()));
                Session scratch = engine.newSession();
                scratch.prefill(prompt);
                int[] scratchTokens = scratch.generate(opts.toBuilder().addStopTokenIds(format.stopTokenIds()).build()).tokens();
                boolean equal = Arrays.equals(reply.tokens(), scratchTokens);
                // the states after the turn: its end-of-turn token fed to both (when the tokens differ, the scratch
                // session is replayed on the reused reply so that both states hold the same sequence)
                float[] reused = conv.session().fork().decode(stopId);
                Session fresh = scratch;
                if (!equal) {
                    fresh = engine.newSession();
                    int[] replay = Arrays.copyOf(prompt, prompt.length + reply.tokens().length);
                    System.arraycopy(reply.tokens(), 0, replay, prompt.length, reply.tokens().length);
                    fresh.prefill(replay);
                }
                float[] expected = fresh.decode(stopId);
                double diff = 0;
                for (int i = 0; i < expected.length; i++) {
                    diff = Math.max(diff, Math.abs(expected[i] - reused[i]));
                }
                out.add(new Turn(s.name(), t + 1, reply.promptTokens(), reply.reusedTokens(), reply.rolledBack(), reply.tokens(),
                        scratchTokens, equal, diff, equal && diff <= tolerance));
                progress.update(out.size(), total, "turns");
            }
        }
        return new Result(out, tolerance, out.size() == total);
    }
}
