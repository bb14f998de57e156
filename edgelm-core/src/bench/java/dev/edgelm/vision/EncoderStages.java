package dev.edgelm.vision;

import dev.edgelm.tensor.StageClock;
import java.nio.file.Path;

/**
 * Where one encode's time goes: a projector file and an image through {@link VisionModel}, the stage clocks on (the
 * vision blocks' stages, the GEMM's decode / tile / write sums, the pool's waits), one warm-up encode dropped. Run
 * (after {@code bin/mvn -B -Pbench package -DskipTests}): {@code java --add-modules jdk.incubator.vector
 * -Dedgelm.stageclock=true -XX:+UseSerialGC -XX:+UseCountedLoopSafepoints -XX:LoopStripMiningIter=1000 -cp
 * edgelm-core/target/benchmarks.jar dev.edgelm.vision.EncoderStages MMPROJ IMAGE [encodes] [threads]}; the report
 * (milliseconds per encode) goes to standard error at exit.
 */
public final class EncoderStages {
    /** CPU time of the whole process (every thread, the pool's spinning included), or -1 where unavailable. */
    private static long processCpuNanos() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1L;
    }

    public static void main(String[] a) {
        if (!StageClock.ON) {
            throw new IllegalStateException("run with -Dedgelm.stageclock=true");
        }
        for (String knob : new String[] {"blockAboveFloats", "panelBlockFloats", "groupFloats"}) {
            Integer v = Integer.getInteger("gemm." + knob);
            if (v != null) { // experiments: PackedGemm's blocking thresholds
                try {
                    var f = Class.forName("dev.edgelm.tensor.PackedGemm").getDeclaredField(knob);
                    f.setAccessible(true);
                    f.setInt(null, v);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        int encodes = a.length > 2 ? Integer.parseInt(a[2]) : 2;
        int threads = a.length > 3 ? Integer.parseInt(a[3]) : 2;
        try (VisionModel m = VisionModel.open(Path.of(a[0]), threads)) {
            PatchGrid.Pixels px = m.preprocess(Path.of(a[1]), null, null);
            for (int i = 0; i <= encodes; i++) {
                StageClock.recording(true);
                long t0 = System.nanoTime();
                long c0 = processCpuNanos();
                m.encode(px);
                long cpu = processCpuNanos() - c0;
                if (i == 0) {
                    StageClock.endChunk(t0); // drops the warm-up encode
                } else {
                    StageClock.stop("prefill", t0); // "prefill" is the report's unit: here one encode
                    StageClock.recording(false);
                }
                System.out.printf("encode %d: %.3f s, %.3f CPU-s (all threads of the process)%n", i,
                        (System.nanoTime() - t0) * 1e-9, cpu * 1e-9);
            }
        }
    }
}
