package dev.edgelm.tokenizer;

/**
 * Lossy UTF-8 decoding as Rust's {@code String::from_utf8_lossy} (and so Hugging Face's decoders) does it: each
 * maximal prefix of a valid sequence that cannot be completed becomes one U+FFFD ("substitution of maximal
 * subparts"). The JDK's decoder groups some invalid sequences differently (e.g. an encoded surrogate).
 */
final class Utf8 {
    private Utf8() {}

    static String decode(byte[] b, int off, int len) {
        StringBuilder sb = new StringBuilder(len);
        int end = off + len;
        int i = off;
        while (i < end) {
            int lead = b[i] & 0xFF;
            if (lead < 0x80) {
                sb.append((char) lead);
                i++;
                continue;
            }
            int need = sequenceLength(lead);
            int valid = need == 0 ? 0 : validContinuations(b, i, end, lead, need);
            if (need == 0 || valid < need - 1) {
                sb.append('\uFFFD');
                i += 1 + valid;
                continue;
            }
            int cp = lead & (0xFF >> (need + 1));
            for (int j = 1; j < need; j++) {
                cp = (cp << 6) | (b[i + j] & 0x3F);
            }
            sb.appendCodePoint(cp);
            i += need;
        }
        return sb.toString();
    }

    /** Bytes in the sequence a lead byte starts, or 0 when it cannot start one. */
    private static int sequenceLength(int lead) {
        if (lead >= 0xC2 && lead <= 0xDF) {
            return 2;
        }
        if (lead >= 0xE0 && lead <= 0xEF) {
            return 3;
        }
        if (lead >= 0xF0 && lead <= 0xF4) {
            return 4;
        }
        return 0;
    }

    /** How many of the bytes after the lead at {@code i} continue its sequence validly (at most need - 1). */
    private static int validContinuations(byte[] b, int i, int end, int lead, int need) {
        int k = 0;
        while (k < need - 1 && i + 1 + k < end) {
            int c = b[i + 1 + k] & 0xFF;
            int lo = 0x80;
            int hi = 0xBF;
            if (k == 0) {
                switch (lead) {
                    case 0xE0 -> lo = 0xA0;
                    case 0xED -> hi = 0x9F;
                    case 0xF0 -> lo = 0x90;
                    case 0xF4 -> hi = 0x8F;
                    default -> { }
                }
            }
            if (c < lo || c > hi) {
                break;
            }
            k++;
        }
        return k;
    }

    /**
     * How many bytes at the end of {@code b[0, len)} are the valid beginning of a character that needs more bytes
     * (0 to 3): they could still decode to one character, so a stream must wait for them.
     */
    static int incompleteTail(byte[] b, int len) {
        for (int k = 1; k <= 3 && k <= len; k++) {
            int lead = b[len - k] & 0xFF;
            if (lead >= 0x80 && lead < 0xC0) {
                continue; // a continuation byte: the lead is further back
            }
            int need = sequenceLength(lead);
            return need > k && validContinuations(b, len - k, len, lead, need) == k - 1 ? k : 0;
        }
        return 0;
    }
}
