package dev.edgelm.util;

/**
 * A user-facing failure: bad input file, bad argument, exhausted capacity. The CLI prints its message
 * without a stack trace and exits non-zero; anything else escaping to the CLI is a bug.
 */
public class EdgeLmException extends RuntimeException {
    public EdgeLmException(String message) {
        super(message);
    }

    public EdgeLmException(String message, Throwable cause) {
        super(message, cause);
    }
}
