package dev.edgelm.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class TokenDecoderTest {
    /** Token i's bytes: a made-up byte-level vocabulary splitting multi-byte characters. */
    private static final byte[][] VOCAB = {
        "ca".getBytes(StandardCharsets.UTF_8),
        {'f', (byte) 0xC3},              // "f" + first byte of é (C3 A9)
        {(byte) 0xA9, ' '},              // last byte of é + " "
        {(byte) 0xF0},                   // 😀 = F0 9F 98 80, split 1 + 2 + 1
        {(byte) 0x9F, (byte) 0x98},
        {(byte) 0x80},
        {},                              // a token without text (a skipped special token)
        {(byte) 0xFF},                   // never valid in UTF-8
    };

    private static TokenDecoder decoder() {
        return TokenDecoder.ofBytes(id -> VOCAB[id]);
    }

    @Test
    void piecesNeverSplitACharacter() {
        TokenDecoder.Stream s = decoder().open();
        assertEquals("ca", s.next(0));
        assertEquals("f", s.next(1));
        assertEquals("é ", s.next(2));
        assertEquals("", s.next(3));
        assertEquals("", s.next(6));
        assertEquals("", s.next(4));
        assertEquals("\uD83D\uDE00", s.next(5));
        assertEquals("", s.finish());
    }

    @Test
    void anIncompleteCharacterAtTheEndBecomesAReplacementCharacter() {
        TokenDecoder.Stream s = decoder().open();
        assertEquals("ca", s.next(0));
        assertEquals("", s.next(3));
        assertEquals("", s.next(4));
        assertEquals("\uFFFD", s.finish());
    }

    @Test
    void invalidBytesBecomeReplacementCharacters() {
        TokenDecoder.Stream s = decoder().open();
        assertEquals("\uFFFDca", s.next(7) + s.next(0));
        assertEquals("", s.finish());
    }
}
