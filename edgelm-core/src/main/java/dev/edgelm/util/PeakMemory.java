package dev.edgelm.util;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's peak memory. On Linux the peak resident set size ({@code VmHWM} in /proc/self/status:
 * heap, native buffers and the resident pages of memory-mapped weights). Elsewhere the sum of the JVM
 * memory pools' peaks, which misses native and mapped memory; {@link #source()} says which one it is.
 */
public record PeakMemory(long bytes, String source) {
    public static final String RSS = "VmHWM";
    public static final String JVM_POOLS = "jvm-pools";

    public static PeakMemory read() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    String[] parts = line.substring(6).trim().split("\\s+");
                    return new PeakMemory(Long.parseLong(parts[0]) * 1024L, RSS);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or no procfs: fall through
        }
        long total = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getPeakUsage() != null) {
                total += pool.getPeakUsage().getUsed();
            }
        }
        return new PeakMemory(total, JVM_POOLS);
    }

    public boolean isRss() {
        return RSS.equals(source);
    }
}
