package dev.edgelm.eval;

import dev.edgelm.model.ChunkPlan;
import dev.edgelm.model.Qwen35Model;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The prompt-length sweep: for every length, every plan prefills the same prompt into a fresh state; the first
 * generated token (greedy) and the logits must match the one-shot prefill's.
 */
public final class Sweep {
    private Sweep() {}

    /** One length under one plan: the argmax equal to the one-shot's, and the largest logit difference. */
    public record Cell(int length, String plan, int[] sizes, int token, int oneShotToken, double maxAbsDiff, boolean clean) {}

    public record Result(List<SweepPlan> plans, List<Integer> lengths, List<List<Cell>> rows, double tolerance, boolean complete) {
        /** Lengths where every plan is clean. */
        public int cleanLengths() {
            int n = 0;
            for (List<Cell> row : rows) {
                if (row.stream().allMatch(Cell::clean)) {
                    n++;
                }
            }
            return n;
        }

        public long cleanCells(String plan) {
            return rows.stream().flatMap(List::stream).filter(c -> c.plan().equals(plan) && c.clean()).count();
        }
    }

    /** Prompt ids drawn from {@code seed}: uniform over the vocabulary, the same for every plan. */
    public static int[] prompt(int vocab, int length, long seed) {
        Random r = new Random(seed);
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = r.nextInt(vocab);
        }
        return ids;
    }

    public static Result run(Qwen35Model model, int[] prompt, List<Integer> lengths, List<SweepPlan> plans, double tolerance,
                             Progress progress, Stop stop) {
        List<List<Cell>> rows = new ArrayList<>();
        progress.update(0, lengths.size(), "lengths");
        for (int length : lengths) {
            if (stop.requested()) {
                break;
            }
            int[] ids = java.util.Arrays.copyOf(prompt, length);
            float[] reference = model.prefill(model.newState(length), ids, ChunkPlan.explicit(length), false);
            int refToken = argmax(reference);
            List<Cell> row = new ArrayList<>();
            for (SweepPlan plan : plans) {
                int[] sizes = plan.sizes(length);
                float[] logits = model.prefill(model.newState(length), ids, ChunkPlan.explicit(sizes), false);
                double diff = 0;
                for (int i = 0; i < logits.length; i++) {
                    diff = Math.max(diff, Math.abs(logits[i] - reference[i]));
                }
                int token = argmax(logits);
                row.add(new Cell(length, plan.name(), sizes, token, refToken, diff, token == refToken && diff <= tolerance));
            }
            rows.add(row);
            progress.update(rows.size(), lengths.size(), "lengths");
        }
        return new Result(plans, lengths.subList(0, rows.size()), rows, tolerance, rows.size() == lengths.size());
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    /** {@code 1-80}, {@code 5}, {@code 1-8,16,32} into a list of lengths. */
    public static List<Integer> parseLengths(String spec) {
        List<Integer> out = new ArrayList<>();
        for (String part : spec.split(",")) {
            String p = part.strip();
            try {
                int dash = p.indexOf('-');
                int a = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int b = dash < 0 ? a : Integer.parseInt(p.substring(dash + 1));
                if (a < 1 || b < a) {
                    throw new dev.edgelm.util.EdgeLmException("--lengths: '" + p + "' is not a range of lengths >= 1");
                }
                for (int i = a; i <= b; i++) {
                    out.add(i);
                }
            } catch (NumberFormatException e) {
                throw new dev.edgelm.util.EdgeLmException("--lengths: '" + p + "' is not a length or a range like 1-80");
            }
        }
        return out;
    }
}
