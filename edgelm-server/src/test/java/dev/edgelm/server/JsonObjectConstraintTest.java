package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The JSON recogniser against Jackson (the reference parser) on hand-written and random texts. */
class JsonObjectConstraintTest {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private static JsonObjectConstraint fed(String text) {
        return new JsonObjectConstraint(new byte[0][]);
    }

    /** Whether the recogniser accepts {@code text} entirely and says it is a complete object. */
    private static boolean[] run(String text) {
        JsonObjectConstraint c = fed(text);
        boolean ok = c.feedText(text.getBytes(StandardCharsets.UTF_8));
        return new boolean[] {ok, ok && c.canStop()};
    }

    private static boolean jacksonObject(String text) {
        try {
            return JSON.readTree(text).isObject();
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void handWrittenCases() {
        for (String good : new String[] {"{}", "{\"a\":1}", "{\"a\": [1, -2.5e+3, true, false, null, \"x\\n\\u00e9\"]}",
                "{\"nested\":{\"deep\":[[],{}]},\"s\":\"é ü\"}", " {\"a\":0}", "{\"a\":0.0}"}) {
            assertTrue(run(good)[1], good);
        }
        for (String bad : new String[] {"[1]", "\"x\"", "{\"a\":01}", "{\"a\":1,}", "{a:1}", "{\"a\" 1}", "{\"a\":tru}",
                "{\"a\":\"line\nbreak\"}", "{\"a\":1}}", "{\"a\":\"\\x\"}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":   1}"}) {
            assertTrue(!run(bad)[1], bad);
        }
        assertTrue(run("{\"a\":[1,")[0], "a valid prefix is accepted so far");
        assertTrue(!run("{\"a\":[1,")[1], "but it is not complete");
    }

    @Test
    void agreesWithJacksonOnRandomTexts() {
        Random r = new Random(3);
        String alphabet = "{}[]:,\" 0123456789.-eEtrufalsn\\a";
        int complete = 0;
        for (int i = 0; i < 20000; i++) {
            StringBuilder sb = new StringBuilder("{");
            int n = r.nextInt(12);
            for (int j = 0; j < n; j++) {
                sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            String text = sb.toString();
            boolean mine = run(text)[1];
            if (mine) {
                complete++;
                assertTrue(jacksonObject(text), text);
            } else if (jacksonObject(text) && text.equals(text.stripTrailing())) { // nothing may follow the object
                assertTrue(text.contains("   "), "only the whitespace cap refuses valid JSON: " + text);
            }
        }
        assertTrue(complete > 10, "some random texts are complete objects: " + complete);
    }

    @Test
    void theShortcutsMaskExactlyWhatWalkingEveryTokenMasks() {
        dev.edgelm.template.ChatFormat f = dev.edgelm.template.ChatFormat.load(dev.edgelm.chat.TinyChat.DIR);
        byte[][] vocab = JsonObjectConstraint.vocabularyBytes(f.tokenizer(), 8320);
        for (String prefix : new String[] {"", "{", "{\"key\"", "{\"key\": ", "{\"key\": \"some te", "{\"a\": [1, 2",
                "{\"a\": \"x\\", "{\"a\": tr", "{\"a\": {}"}) {
            JsonObjectConstraint fast = new JsonObjectConstraint(vocab);
            JsonObjectConstraint slow = new JsonObjectConstraint(vocab);
            slow.shortcuts = false;
            assertTrue(fast.feedText(prefix.getBytes(StandardCharsets.UTF_8)), prefix);
            slow.feedText(prefix.getBytes(StandardCharsets.UTF_8));
            float[] a = new float[8320];
            float[] b = new float[8320];
            fast.mask(a);
            slow.mask(b);
            org.junit.jupiter.api.Assertions.assertArrayEquals(b, a, prefix);
        }
    }

    @Test
    void maskAllowsExactlyTheTokensThatKeepTheTextValid() {
        byte[][] vocab = {"{".getBytes(), "}".getBytes(), "\"a\"".getBytes(), ":".getBytes(), "1".getBytes(), "x".getBytes(), null};
        JsonObjectConstraint c = new JsonObjectConstraint(vocab);
        float[] l = new float[7];
        c.mask(l);
        assertEquals(Float.NEGATIVE_INFINITY, l[1]);
        assertEquals(0f, l[0]);
        assertEquals(Float.NEGATIVE_INFINITY, l[6], "a special token is never allowed");
        for (int t : new int[] {0, 2, 3, 4}) {
            c.accept(t);
        }
        l = new float[7];
        c.mask(l);
        assertEquals(0f, l[1], "} closes the object");
        assertEquals(0f, l[4], "more digits");
        assertEquals(Float.NEGATIVE_INFINITY, l[5]);
        c.accept(1);
        assertTrue(c.canStop());
    }
}
