package dev.edgelm.util;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Text files read as strict UTF-8, with errors that name the file and the offending byte. */
public final class TextFiles {
    private TextFiles() {}

    /** The file's text; bad UTF-8 is an error naming the file and the byte offset (not "Input length = 1"). */
    public static String readUtf8(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new EdgeLmException(file + ": cannot read: " + e.getMessage());
        }
        return decodeUtf8(bytes, file.toString());
    }

    /** Strict UTF-8 decoding of {@code bytes}; {@code where} names their origin in the error. */
    public static String decodeUtf8(byte[] bytes, String where) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            return decoder.decode(in).toString();
        } catch (MalformedInputException e) {
            throw new EdgeLmException(where + ": not valid UTF-8 text (bad byte 0x"
                    + String.format("%02x", bytes[Math.min(in.position(), bytes.length - 1)] & 0xff) + " at offset " + in.position() + ")");
        } catch (CharacterCodingException e) {
            throw new EdgeLmException(where + ": not valid UTF-8 text at offset " + in.position());
        }
    }
}
