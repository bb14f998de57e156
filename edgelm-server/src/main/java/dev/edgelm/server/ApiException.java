package dev.edgelm.server;

/**
 * A request the server refuses, answered in OpenAI's (and llama-server's) error shape:
 * {@code {"error": {"code": 400, "message": "...", "type": "invalid_request_error", "param": "messages"}}}.
 */
public final class ApiException extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;

    public ApiException(int status, String type, String param, String message) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
    }

    /** 400 naming the field at fault. */
    public static ApiException invalid(String param, String message) {
        return new ApiException(400, "invalid_request_error", param, message);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    /** The request field at fault, or null. */
    public String param() {
        return param;
    }
}
