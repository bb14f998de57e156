package dev.edgelm.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IncrementalDecoderTest {

    private static int byteToken(Tokenizer tok, int b) {
        return tok.id(String.valueOf(ByteLevel.charOf(b))).orElseThrow();
    }

    @Test
    void holdsBackAnUnfinishedCharacterUntilItIsComplete() {
        Tokenizer tok = TestTokenizers.tinyChat();
        // U+1F600 is F0 9F 98 80: nothing comes out until the fourth byte
        IncrementalDecoder d = tok.newDecoder(false);
        List<String> pieces = new ArrayList<>();
        for (int b : new int[] {'a', 0xF0, 0x9F, 0x98, 0x80, 'b'}) {
            pieces.add(d.accept(byteToken(tok, b)));
        }
        pieces.add(d.finish());
        assertEquals(List.of("a", "", "", "", "\uD83D\uDE00", "b", ""), pieces);
    }

    @Test
    void flushesWhatIsLeftAtTheEnd() {
        Tokenizer tok = TestTokenizers.tinyChat();
        IncrementalDecoder d = tok.newDecoder(false);
        assertEquals("x", d.accept(byteToken(tok, 'x')));
        assertEquals("", d.accept(byteToken(tok, 0xE4)));
        assertEquals("", d.accept(byteToken(tok, 0xBD)));
        assertEquals("\uFFFD", d.finish());
        assertEquals("", d.finish());
    }

    @Test
    void invalidBytesComeOutAtOnce() {
        Tokenizer tok = TestTokenizers.tinyChat();
        IncrementalDecoder d = tok.newDecoder(false);
        assertEquals("\uFFFD", d.accept(byteToken(tok, 0xFF)));
        assertEquals("", d.accept(byteToken(tok, 0xE4)));
        // E4 then 'A': E4 can no longer be completed
        assertEquals("\uFFFDA", d.accept(byteToken(tok, 'A')));
    }

    @Test
    void skipsSpecialTokensOnRequest() {
        Tokenizer tok = TestTokenizers.tinyChat();
        int imEnd = tok.id("<|im_end|>").orElseThrow();
        int think = tok.id("<think>").orElseThrow();
        IncrementalDecoder skipping = tok.newDecoder(true);
        assertEquals("", skipping.accept(imEnd));
        assertEquals("<think>", skipping.accept(think)); // not a special token
        assertEquals("<|im_end|>", tok.newDecoder(false).accept(imEnd));
    }

    @Test
    void incompleteTailFollowsTheUtf8Ranges() {
        assertEquals(0, Utf8.incompleteTail(new byte[] {'a'}, 1));
        assertEquals(1, Utf8.incompleteTail(new byte[] {(byte) 0xC3}, 1));
        assertEquals(2, Utf8.incompleteTail(new byte[] {(byte) 0xE4, (byte) 0xBD}, 2));
        assertEquals(0, Utf8.incompleteTail(new byte[] {(byte) 0xE4, (byte) 0xBD, (byte) 0xA0}, 3));
        assertEquals(0, Utf8.incompleteTail(new byte[] {(byte) 0xED, (byte) 0xA0}, 2)); // would be a surrogate
        assertEquals(0, Utf8.incompleteTail(new byte[] {(byte) 0xE0, (byte) 0x80}, 2)); // overlong
        assertEquals(3, Utf8.incompleteTail(new byte[] {(byte) 0xF0, (byte) 0x9F, (byte) 0x98}, 3));
        assertEquals(0, Utf8.incompleteTail(new byte[] {(byte) 0xF5}, 1));
        assertEquals(0, Utf8.incompleteTail(new byte[] {(byte) 0xC0}, 1));
    }
}
