package dev.edgelm.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The native read loop ({@code tools/readbw/readbw.c}, shipped in the jar): compiled once with the machine's C
 * compiler into the cache and run as a child process, so that decode can be read against what C reaches on
 * the same threads in the same minute. Where no compiler is on the {@code PATH} (or it fails), the result says
 * so instead of a figure: a benchmark never fails for want of a compiler.
 */
public final class NativeReadLoop {
    static final String SOURCE = "/dev/edgelm/bench/readbw.c";
    private static final Pattern BEST = Pattern.compile("best_gbps=([0-9.]+)");
    private static final Pattern ISA = Pattern.compile("isa=(\\S+)");
    private static final long RUN_TIMEOUT_SECONDS = 300;

    private NativeReadLoop() {}

    /** A figure (bytes per second and the vector instructions used), or why there is none. */
    public record Result(double bytesPerSecond, String isa, String unavailable) {
        public boolean available() {
            return unavailable == null;
        }

        static Result missing(String why) {
            return new Result(Double.NaN, null, why);
        }
    }

    /**
     * Builds (once, into {@code cacheDir/tools}) and runs the loop on {@code threads} threads over a
     * {@code mib}-MiB buffer, best of {@code passes}. {@code env} supplies {@code PATH} and {@code CC}.
     */
    public static Result measure(Map<String, String> env, Path cacheDir, int threads, long mib, int passes) {
        Path binary;
        try {
            binary = build(env, cacheDir);
        } catch (Unavailable e) {
            return Result.missing(e.getMessage());
        }
        List<String> command = List.of(binary.toString(), Integer.toString(threads), Long.toString(mib), Integer.toString(passes));
        try {
            String out = run(command, RUN_TIMEOUT_SECONDS);
            return parse(out);
        } catch (Unavailable e) {
            return Result.missing(e.getMessage());
        }
    }

    /** The figure from the tool's one line of output. */
    static Result parse(String line) throws Unavailable {
        Matcher best = BEST.matcher(line);
        Matcher isa = ISA.matcher(line);
        if (!best.find()) {
            throw new Unavailable("the native read loop printed no figure: " + line.strip());
        }
        return new Result(Double.parseDouble(best.group(1)) * 1e9, isa.find() ? isa.group(1) : "?", null);
    }

    /** The compiled tool, built on first use; its name carries the source's hash, so a changed source rebuilds. */
    static Path build(Map<String, String> env, Path cacheDir) throws Unavailable {
        byte[] source;
        try (InputStream in = NativeReadLoop.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new Unavailable("this build carries no native read loop source");
            }
            source = in.readAllBytes();
        } catch (IOException e) {
            throw new Unavailable("cannot read the native read loop source: " + e.getMessage());
        }
        String compiler = env.getOrDefault("CC", "cc");
        Path cc = findOnPath(compiler, env.get("PATH"));
        if (cc == null) {
            throw new Unavailable("no C compiler ('" + compiler + "') on the PATH");
        }
        Path dir = cacheDir.resolve("tools");
        Path binary = dir.resolve("readbw-" + sha256(source).substring(0, 12));
        if (Files.isExecutable(binary)) {
            return binary;
        }
        try {
            Files.createDirectories(dir);
            Path src = Files.createTempFile(dir, ".readbw-", ".c");
            Path tmp = dir.resolve("." + binary.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
            try {
                Files.write(src, source);
                // -march=native for the widest loads the machine has; a compiler without it gets a portable build
                try {
                    run(List.of(cc.toString(), "-O2", "-march=native", "-pthread", "-o", tmp.toString(), src.toString()), 120);
                } catch (Unavailable first) {
                    run(List.of(cc.toString(), "-O2", "-pthread", "-o", tmp.toString(), src.toString()), 120);
                }
                Files.move(tmp, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(src);
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new Unavailable("cannot build the native read loop in " + dir + ": " + e.getMessage());
        } catch (Unavailable e) {
            throw new Unavailable("the C compiler failed on the native read loop: " + e.getMessage());
        }
        return binary;
    }

    static Path findOnPath(String name, String path) {
        if (name.contains("/")) {
            Path p = Path.of(name);
            return Files.isExecutable(p) ? p : null;
        }
        if (path == null) {
            return null;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path p = Path.of(dir, name);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** Standard output of {@code command} (standard error merged), or why it did not succeed. */
    static String run(List<String> command, long timeoutSeconds) throws Unavailable {
        Process process;
        try {
            process = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new Unavailable("cannot start " + command.getFirst() + ": " + e.getMessage());
        }
        try {
            process.getOutputStream().close();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new Unavailable(command.getFirst() + " did not finish within " + timeoutSeconds + " s");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new Unavailable(Path.of(command.getFirst()).getFileName() + " exited with status "
                        + process.exitValue() + (text.isBlank() ? "" : ": " + lastLine(text)));
            }
            return text;
        } catch (IOException e) {
            process.destroyForcibly();
            throw new Unavailable("reading the output of " + command.getFirst() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted");
        }
    }

    private static String lastLine(String text) {
        String[] lines = text.strip().split("\n");
        return lines[lines.length - 1];
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Why a native figure cannot be had (a missing or failing tool): reported, never thrown to the user. */
    static final class Unavailable extends Exception {
        Unavailable(String message) {
            super(message);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
