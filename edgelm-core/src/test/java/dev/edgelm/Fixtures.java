package dev.edgelm;

import dev.edgelm.format.npy.Npy;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/** Locates the fixture copies under {@code src/test/resources/fixtures}. */
public final class Fixtures {
    private Fixtures() {}

    public static Path path(String relative) {
        URL url = Fixtures.class.getClassLoader().getResource("fixtures/" + relative);
        if (url == null) {
            throw new IllegalStateException("missing test fixture: fixtures/" + relative);
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Npy.Array npy(String relative) {
        return Npy.read(path(relative));
    }

    /** Max abs difference between {@code actual[actualOff ..]} and all of {@code expected}. */
    public static float maxAbsDiff(float[] expected, float[] actual, int actualOff) {
        float max = 0f;
        for (int i = 0; i < expected.length; i++) {
            max = Math.max(max, Math.abs(expected[i] - actual[actualOff + i]));
        }
        return max;
    }

    public static int argmax(float[] v, int off, int n) {
        int best = 0;
        for (int i = 1; i < n; i++) {
            if (v[off + i] > v[off + best]) {
                best = i;
            }
        }
        return best;
    }
}
