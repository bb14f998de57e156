package dev.edgelm.util;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The machine a benchmark ran on: CPU model, the vector instruction sets that matter here, the JVM. */
public final class MachineInfo {
    /** Flags of /proc/cpuinfo that decide which kernels the JIT can emit. */
    private static final List<String> FLAGS = List.of("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
            "avx512vl", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8", "asimd", "sve", "sve2");

    private MachineInfo() {}

    /** E.g. "AMD EPYC 9R45 (2 cores online)"; the architecture where the model name cannot be read. */
    public static String cpuModel() {
        for (String line : cpuinfo()) {
            if (line.startsWith("model name") || line.startsWith("Model") || line.startsWith("Hardware")) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    return line.substring(colon + 1).strip();
                }
            }
        }
        return System.getProperty("os.arch");
    }

    /** The {@link #FLAGS} the CPU reports, in that order (empty where /proc/cpuinfo is missing). */
    public static List<String> cpuFlags() {
        for (String line : cpuinfo()) {
            if (line.startsWith("flags") || line.startsWith("Features")) {
                Set<String> have = Set.of(line.substring(line.indexOf(':') + 1).strip().split("\\s+"));
                List<String> out = new ArrayList<>();
                for (String f : FLAGS) {
                    if (have.contains(f)) {
                        out.add(f);
                    }
                }
                return out;
            }
        }
        return List.of();
    }

    /** E.g. "OpenJDK 64-Bit Server VM 25+36". */
    public static String jvm() {
        return System.getProperty("java.vm.name", "Java") + " " + System.getProperty("java.vm.version", Runtime.version().toString());
    }

    private static List<String> cpuinfo() {
        try {
            Path p = Path.of("/proc/cpuinfo");
            return Files.isReadable(p) ? Files.readAllLines(p) : List.of();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
