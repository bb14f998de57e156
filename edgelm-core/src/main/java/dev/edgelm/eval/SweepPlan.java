package dev.edgelm.eval;

import dev.edgelm.util.EdgeLmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A way of cutting a prompt into prefill calls, for every prompt length: one shot, LiteRT-LM's signature ladder
 * (the largest compiled prefill size that fits, again and again: 1024/512/256/.../1), its reduced ladder
 * (1024/256/64/16/4/1), fixed sizes, or random sizes from a seed.
 */
public record SweepPlan(String name, Kind kind, int[] ladder, int fixed, long seed) {
    public enum Kind { ONE_SHOT, LADDER, FIXED, RANDOM }

    static final int[] LADDER = {1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1};
    static final int[] REDUCED = {1024, 256, 64, 16, 4, 1};

    /** {@code oneshot}, {@code ladder}, {@code reduced}, {@code fixed:N} or {@code random:SEED}. */
    public static SweepPlan parse(String spec) {
        String s = spec.strip();
        if (s.equals("oneshot")) {
            return new SweepPlan(s, Kind.ONE_SHOT, null, 0, 0);
        }
        if (s.equals("ladder")) {
            return new SweepPlan(s, Kind.LADDER, LADDER, 0, 0);
        }
        if (s.equals("reduced")) {
            return new SweepPlan(s, Kind.LADDER, REDUCED, 0, 0);
        }
        try {
            if (s.startsWith("fixed:")) {
                int n = Integer.parseInt(s.substring(6));
                if (n < 1) {
                    throw new EdgeLmException("--plans: fixed size must be at least 1, got " + n);
                }
                return new SweepPlan(s, Kind.FIXED, null, n, 0);
            }
            if (s.startsWith("random:")) {
                return new SweepPlan(s, Kind.RANDOM, null, 0, Long.parseLong(s.substring(7)));
            }
        } catch (NumberFormatException e) {
            throw new EdgeLmException("--plans: '" + spec + "' needs a whole number after the colon");
        }
        throw new EdgeLmException("--plans: unknown plan '" + spec + "' (oneshot, ladder, reduced, fixed:N, random:SEED)");
    }

    /** The default set: every kind, fixed sizes 1, 3 and 16, two random seeds. */
    public static List<SweepPlan> defaults() {
        List<SweepPlan> out = new ArrayList<>();
        for (String s : new String[] {"oneshot", "ladder", "reduced", "fixed:1", "fixed:3", "fixed:16", "random:1", "random:2"}) {
            out.add(parse(s));
        }
        return out;
    }

    /** The chunk sizes for a prompt of {@code length} tokens (they add up to it). */
    public int[] sizes(int length) {
        List<Integer> out = new ArrayList<>();
        int left = length;
        Random random = kind == Kind.RANDOM ? new Random(seed * 1_000_003L + length) : null;
        while (left > 0) {
            int s = switch (kind) {
                case ONE_SHOT -> left;
                case FIXED -> Math.min(fixed, left);
                case RANDOM -> 1 + random.nextInt(left);
                case LADDER -> largestFitting(left);
            };
            out.add(s);
            left -= s;
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private int largestFitting(int left) {
        for (int s : ladder) {
            if (s <= left) {
                return s;
            }
        }
        throw new IllegalStateException("ladder without 1");
    }
}
