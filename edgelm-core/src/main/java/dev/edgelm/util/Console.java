package dev.edgelm.util;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What the process's console is: whether a standard stream is a terminal, how wide the terminal is, and
 * whether colours are wanted ({@code NO_COLOR}, https://no-color.org). The {@code bin/edgelm} launcher
 * passes standard error through a filter (to drop the JVM's incubator-module warning), so it tells the
 * process in {@code EDGELM_STDERR_TERMINAL} and {@code EDGELM_COLUMNS} what the terminal behind it is.
 */
public final class Console {
    private static final int TIOCGWINSZ_LINUX = 0x5413;
    private static final int TIOCGWINSZ_MAC = 0x40087468;
    private static final int DEFAULT_WIDTH = 80;

    private Console() {}

    /** C's {@code isatty(fd)}, or empty where it cannot be called. */
    public static Optional<Boolean> isatty(int fd) {
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle isatty = linker.downcallHandle(linker.defaultLookup().find("isatty").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            return Optional.of((int) isatty.invokeExact(fd) == 1);
        } catch (Throwable e) {
            return Optional.empty();
        }
    }

    /** Whether standard error shows on a terminal (the launcher's word for it first). */
    public static boolean stderrIsTerminal(Map<String, String> env) {
        String told = env.get("EDGELM_STDERR_TERMINAL");
        if (told != null && !told.isBlank()) {
            return told.strip().equals("1");
        }
        return isatty(2).orElse(false);
    }

    /** Whether escape codes (colour, dim text) may be written to a terminal: not when {@code NO_COLOR} is set. */
    public static boolean colorAllowed(Map<String, String> env) {
        String noColor = env.get("NO_COLOR");
        return noColor == null || noColor.isEmpty();
    }

    /** Columns of the terminal: {@code EDGELM_COLUMNS} or {@code COLUMNS}, else asked of the terminal, else 80. */
    public static int width(Map<String, String> env) {
        for (String key : new String[] {"EDGELM_COLUMNS", "COLUMNS"}) {
            String v = env.get(key);
            if (v != null && v.strip().matches("[0-9]{1,4}") && Integer.parseInt(v.strip()) >= 20) {
                return Integer.parseInt(v.strip());
            }
        }
        for (int fd : new int[] {2, 1, 0}) {
            int w = ioctlWidth(fd);
            if (w >= 20) {
                return w;
            }
        }
        return DEFAULT_WIDTH;
    }

    /** {@code ioctl(fd, TIOCGWINSZ)}'s column count, or 0. (JLine can tell too, but only by opening the terminal.) */
    private static int ioctlWidth(int fd) {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        int request = os.contains("linux") ? TIOCGWINSZ_LINUX : os.contains("mac") ? TIOCGWINSZ_MAC : 0;
        if (request == 0) {
            return 0;
        }
        try (Arena arena = Arena.ofConfined()) {
            Linker linker = Linker.nativeLinker();
            MethodHandle ioctl = linker.downcallHandle(linker.defaultLookup().find("ioctl").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                    Linker.Option.firstVariadicArg(2));
            MemorySegment winsize = arena.allocate(8); // unsigned short rows, cols, xpixel, ypixel
            int rc = (int) ioctl.invokeExact(fd, (long) request, winsize);
            return rc == 0 ? Short.toUnsignedInt(winsize.get(ValueLayout.JAVA_SHORT, 2)) : 0;
        } catch (Throwable e) {
            return 0;
        }
    }
}
