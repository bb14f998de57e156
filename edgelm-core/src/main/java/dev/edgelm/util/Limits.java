package dev.edgelm.util;

/**
 * The sizes EdgeLM accepts from files and input before it allocates anything proportional to them. A model file
 * or a pipe may declare any number; these caps turn an absurd one into a clear error instead of minutes of work
 * or an OutOfMemoryError. Each is far above what released models need and can be raised with a system property
 * (for the CLI: {@code EDGELM_JAVA_OPTS=-Dedgelm.limit.layers=4096}).
 */
public final class Limits {
    private Limits() {}

    /** Decoder layers of a model ({@code edgelm.limit.layers}, default 1024; Qwen3.5 has at most 64). */
    public static int layers() {
        return get("edgelm.limit.layers", 1024);
    }

    /**
     * A hidden size, MLP width, head count times head dim or other row length ({@code edgelm.limit.dim}, default
     * 1,048,576; Qwen3.5's widest is 17,408).
     */
    public static int dimension() {
        return get("edgelm.limit.dim", 1 << 20);
    }

    /** Token ids of a tokenizer ({@code edgelm.limit.vocab}, default 16,777,216; Qwen3.5 has 248,320). */
    public static int vocabulary() {
        return get("edgelm.limit.vocab", 1 << 24);
    }

    /** Bytes of text read from standard input ({@code edgelm.limit.stdin}, default 16 MiB). */
    public static int stdinBytes() {
        return get("edgelm.limit.stdin", 16 << 20);
    }

    private static int get(String property, int fallback) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new EdgeLmException("system property " + property + " = '" + v + "' is not a positive integer");
    }
}
