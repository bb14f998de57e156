package dev.edgelm.tensor;

/**
 * Per-thread scratch arrays for the kernels: each thread's array grows to the largest size asked of it and
 * is then reused, so a hot path allocates nothing per call. Contents are not kept between calls.
 */
public final class Scratch {
    private Scratch() {}

    /** A thread's float array of at least the asked size. */
    public static final class Floats {
        private final ThreadLocal<float[]> local = ThreadLocal.withInitial(() -> new float[0]);

        public float[] get(int size) {
            float[] a = local.get();
            if (a.length < size) {
                a = new float[size];
                local.set(a);
            }
            return a;
        }
    }

    /** A thread's short array of at least the asked size. */
    public static final class Shorts {
        private final ThreadLocal<short[]> local = ThreadLocal.withInitial(() -> new short[0]);

        public short[] get(int size) {
            short[] a = local.get();
            if (a.length < size) {
                a = new short[size];
                local.set(a);
            }
            return a;
        }
    }
}
