package dev.edgelm.engine;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.function.IntFunction;

/**
 * Turns generated token ids into text, incrementally. A tokenizer implements it; the engine opens one
 * {@link Stream} per generation and feeds it every emitted token in order.
 *
 * <p>Contract: concatenating every {@link Stream#next} result and then {@link Stream#finish()} gives the
 * text of the whole token sequence. A token may end in the middle of a UTF-8 character (byte-level BPE
 * splits multi-byte characters across tokens): {@code next} then returns only the complete characters and
 * keeps the remaining bytes until a later token completes them, so no piece ever holds half a character
 * or a spurious U+FFFD. {@code finish} returns what is still held, an incomplete character becoming
 * U+FFFD (as Hugging Face's {@code decode} does).
 */
public interface TokenDecoder {

    /** A decoding pass over one token sequence. Not thread-safe. */
    interface Stream {
        /** Text completed by {@code id} (possibly empty). */
        String next(int id);

        /** Text still held back; the stream must not be used afterwards. */
        String finish();
    }

    Stream open();

    /**
     * A decoder for tokenizers whose tokens are byte strings (byte-level BPE): {@code bytes} gives each
     * token's bytes (empty for tokens that produce no text, e.g. skipped special tokens); this assembles
     * them into UTF-8 text, invalid sequences becoming U+FFFD.
     */
    static TokenDecoder ofBytes(IntFunction<byte[]> bytes) {
        return () -> new Utf8Stream(bytes);
    }

    /** Assembles UTF-8 text from byte pieces, keeping an incomplete trailing character for later. */
    final class Utf8Stream implements Stream {
        private final IntFunction<byte[]> bytes;
        private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        private ByteBuffer pending = ByteBuffer.allocate(16);

        Utf8Stream(IntFunction<byte[]> bytes) {
            this.bytes = bytes;
        }

        @Override
        public String next(int id) {
            byte[] b = bytes.apply(id);
            if (pending.remaining() < b.length) {
                ByteBuffer grown = ByteBuffer.allocate(pending.position() + b.length + 16);
                pending.flip();
                grown.put(pending);
                pending = grown;
            }
            pending.put(b);
            return drain(false);
        }

        @Override
        public String finish() {
            String out = drain(true);
            CharBuffer tail = CharBuffer.allocate(4);
            decoder.flush(tail);
            tail.flip();
            return out + tail;
        }

        private String drain(boolean endOfInput) {
            pending.flip();
            CharBuffer out = CharBuffer.allocate(pending.remaining() + 4);
            decoder.decode(pending, out, endOfInput);
            pending.compact();
            out.flip();
            return out.toString();
        }
    }
}
