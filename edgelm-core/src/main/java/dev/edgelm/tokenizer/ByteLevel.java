package dev.edgelm.tokenizer;

/**
 * GPT-2's reversible byte-to-character mapping: printable Latin-1 bytes stand for themselves, the other 68
 * bytes are shifted to U+0100 and up, so that every byte sequence becomes a string of visible characters.
 */
public final class ByteLevel {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[512];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + n++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevel() {}

    /** The character that stands for byte {@code b} (0..255). */
    public static char charOf(int b) {
        return BYTE_TO_CHAR[b & 0xFF];
    }

    /** The byte that character {@code c} stands for, or -1 when {@code c} is not part of the mapping. */
    public static int byteOf(char c) {
        return c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    }

    /** The mapped string of some bytes. */
    public static String encode(byte[] bytes) {
        char[] out = new char[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = BYTE_TO_CHAR[bytes[i] & 0xFF];
        }
        return new String(out);
    }

    /**
     * The bytes a token string stands for, as Hugging Face's ByteLevel decoder does it: the mapped bytes when
     * every character is part of the mapping, else the token's own UTF-8 (added tokens such as {@code <|im_end|>}
     * map to themselves either way).
     */
    public static byte[] decode(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            int b = byteOf(token.charAt(i));
            if (b < 0) {
                return token.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            out[i] = (byte) b;
        }
        return out;
    }
}
