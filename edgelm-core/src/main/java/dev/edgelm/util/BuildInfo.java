package dev.edgelm.util;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version and git commit this build was made from ({@code dev/edgelm/build.properties}, written by the build). */
public final class BuildInfo {
    private static final Properties PROPS = load();

    private BuildInfo() {}

    /** E.g. {@code 0.1.0-SNAPSHOT}; {@code dev} when the build wrote nothing. */
    public static String version() {
        return value("version", "dev");
    }

    /** The abbreviated commit, or {@code unknown} (a build outside a git checkout). */
    public static String commit() {
        return value("commit", "unknown");
    }

    private static String value(String key, String fallback) {
        String v = PROPS.getProperty(key, "").strip();
        return v.isEmpty() || v.startsWith("${") ? fallback : v;
    }

    private static Properties load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/dev/edgelm/build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // no build information: "dev", "unknown"
        }
        return p;
    }
}
