package dev.edgelm.jinja;

/**
 * A string marked safe ({@code |safe}): jinja2's {@code Markup}. Its one effect without autoescaping is on
 * {@code +}: {@code markup + text} and {@code text + markup} HTML-escape the plain text ({@code "'"|safe + x}
 * writes {@code x} with {@code &#39;}, {@code &#34;}, ...). The runtime keeps the mark through {@code +} chains,
 * {@code set} and conditional expressions, and reads it as its plain text everywhere else.
 */
record Markup(String text) {
    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&#34;").replace("'", "&#39;");
    }

    /** {@code a + b} where either side is markup and both are strings: the plain side escaped. */
    static Markup concat(Object a, Object b) {
        String left = a instanceof Markup m ? m.text : escape((String) a);
        String right = b instanceof Markup m ? m.text : escape((String) b);
        return new Markup(left + right);
    }

    @Override
    public String toString() {
        return text;
    }
}
