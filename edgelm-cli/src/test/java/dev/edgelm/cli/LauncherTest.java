package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.edgelm.chat.TinyChat;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launchers in separate processes: {@code bin/edgelm} through a symlink in an unpacked-distribution layout,
 * {@code java -jar} without the Vector API flag, a library call without it, and the advice when no JDK 25 is found.
 * The jar here is a small one whose manifest points at the compiled classes (the real one is built by {@code package}).
 */
class LauncherTest {
    @TempDir
    static Path dist;
    static Path jar;
    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    record Result(int code, String out, String err) {}

    @BeforeAll
    static void layout() throws IOException {
        assumeTrue(!System.getProperty("os.name").toLowerCase().contains("win"), "bash launcher");
        Files.createDirectories(dist.resolve("bin/lib"));
        Files.createDirectories(dist.resolve("lib"));
        Files.copy(Path.of("bin/edgelm"), dist.resolve("bin/edgelm"));
        Files.copy(Path.of("bin/lib/java.sh"), dist.resolve("bin/lib/java.sh"));
        dist.resolve("bin/edgelm").toFile().setExecutable(true);
        jar = dist.resolve("lib/edgelm.jar");
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, Main.class.getName());
        m.getMainAttributes().put(new Attributes.Name("Enable-Native-Access"), "ALL-UNNAMED");
        List<String> urls = new ArrayList<>();
        for (String entry : classPath().split(File.pathSeparator)) {
            if (!entry.isBlank()) {
                urls.add(Path.of(entry).toAbsolutePath().toUri().toString());
            }
        }
        m.getMainAttributes().put(Attributes.Name.CLASS_PATH, String.join(" ", urls));
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out, m)) {
            j.flush();
        }
    }

    static String classPath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    static Result exec(Map<String, String> env, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().remove("EDGELM_RELAUNCHED");
        pb.environment().remove("EDGELM_JAVA_OPTS");
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile(dist, "out", ".txt");
        Path err = Files.createTempFile(dist, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + List.of(command));
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void theLauncherWorksThroughASymlinkAndHidesTheIncubatorWarning(@TempDir Path path) throws Exception {
        Path link = path.resolve("edgelm");
        Files.createSymbolicLink(link, dist.resolve("bin/edgelm"));
        Result version = exec(Map.of(), link.toString(), "--version");
        assertEquals(0, version.code(), version.err());
        assertTrue(version.out().startsWith("edgelm ") && version.out().contains("Vector API"), "the module was added: " + version.out());
        assertFalse(version.err().contains("incubator"), "no incubator warning: " + version.err());
        Result answer = exec(Map.of(), link.toString(), "run", TinyChat.DIR.toAbsolutePath().toString(), TinyChat.TURN1,
                "--system", TinyChat.SYSTEM, "-n", "24", "-t", "1");
        assertEquals(0, answer.code(), answer.err());
        assertEquals(TinyChat.text("turn1_reply") + "\n", answer.out());
        assertEquals("", answer.err(), "nothing on a non-terminal stderr");
    }

    @Test
    void javaDashJarStartsAgainWithTheFlagOrSaysWhichFlagIsMissing() throws Exception {
        Result r = exec(Map.of(), JAVA, "-jar", jar.toString(), "--version");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("Vector API"), "started again with the module: " + r.out());
        assertFalse(r.err().contains("incubator"), r.err());
        Result refused = exec(Map.of("EDGELM_RELAUNCHED", "1"), JAVA, "-jar", jar.toString(), "--version");
        assertEquals(1, refused.code());
        assertEquals(1, refused.err().strip().lines().count(), "one line: " + refused.err());
        assertTrue(refused.err().contains("--add-modules jdk.incubator.vector"), refused.err());
    }

    @Test
    void aLibraryUserWithoutTheModuleGetsOneClearMessage() throws Exception {
        Result r = exec(Map.of(), JAVA, "-cp", classPath(), "dev.edgelm.engine.NoVectorProbe", TinyChat.DIR.toString());
        assertEquals(3, r.code(), r.out() + r.err());
        assertTrue(r.out().startsWith("EdgeLM needs the Vector API: start Java with --add-modules jdk.incubator.vector"), r.out());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    /**
     * A PATH with every command of /usr/bin and /bin but java (links in {@code tmp}): on a host whose default java
     * is a JDK 25 the launcher would find it through PATH, and the tests of a missing or broken JDK would not be.
     */
    private static String pathWithoutJava(Path tmp) throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("path-without-java"));
        for (String dir : new String[] {"/usr/bin", "/bin"}) {
            File[] files = new File(dir).listFiles();
            for (File f : files == null ? new File[0] : files) {
                Path link = bin.resolve(f.getName());
                if (!f.getName().startsWith("java") && !Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(link, f.toPath());
                }
            }
        }
        return bin.toString();
    }

    @Test
    void withoutAJdk25TheLauncherSaysWhereToGetOne(@TempDir Path tmp) throws Exception {
        Result r = exec(Map.of("JAVA_HOME", "/nonexistent", "EDGELM_JDK_SEARCH", "/nonexistent", "PATH", pathWithoutJava(tmp)),
                "bash", "-c", ". '" + Path.of("bin/lib/java.sh").toAbsolutePath() + "' && edgelm_find_java");
        assertEquals(1, r.code());
        for (String hint : new String[] {"JDK 25", "apt-get install openjdk-25-jdk", "brew install openjdk@25",
                "winget install", "adoptium.net"}) {
            assertTrue(r.err().contains(hint), hint + " in " + r.err());
        }
        assertTrue(new String(Files.readAllBytes(Path.of("bin/edgelm.cmd")), StandardCharsets.UTF_8)
                .contains("--add-modules jdk.incubator.vector"), "the Windows launcher passes the flag too");
    }

    /**
     * A broken JDK is skipped and named, never trusted on its release file alone nor a silent exit of the
     * launcher (a java that fails made {@code set -e} end bin/edgelm without a word).
     */
    @Test
    void aBrokenJdkIsNamedNotTrustedOrASilentExit(@TempDir Path tmp) throws Exception {
        Path noJava = Files.createDirectories(tmp.resolve("no-java/bin"));
        Files.writeString(noJava.getParent().resolve("release"), "JAVA_VERSION=\"25\"\n");
        Path dirJava = Files.createDirectories(tmp.resolve("dir-java/bin/java"));
        Files.writeString(dirJava.getParent().getParent().resolve("release"), "JAVA_VERSION=\"25.0.1\"\n");
        Path failing = Files.createDirectories(tmp.resolve("failing/bin")).resolve("java");
        Files.writeString(failing, "#!/bin/sh\nexit 3\n");
        assertTrue(failing.toFile().setExecutable(true));
        String[][] cases = {{noJava.getParent().toString(), "(no bin/java)"},
            {dirJava.getParent().getParent().toString(), "(bin/java is not an executable file)"},
            {failing.getParent().getParent().toString(), "(bin/java gave no version"}};
        String path = pathWithoutJava(tmp);
        for (String[] c : cases) {
            Result r = exec(Map.of("JAVA_HOME", c[0], "EDGELM_JDK_SEARCH", "/nonexistent", "PATH", path),
                    dist.resolve("bin/edgelm").toString(), "--version");
            assertEquals(1, r.code(), c[0] + ": " + r.out() + r.err());
            assertTrue(r.err().contains("needs a JDK 25"), c[0] + ": " + r.err());
            assertTrue(r.err().contains(c[0] + " " + c[1]), c[0] + " named: " + r.err());
        }
    }
}
