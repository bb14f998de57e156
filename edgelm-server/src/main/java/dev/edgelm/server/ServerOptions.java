package dev.edgelm.server;

import dev.edgelm.util.EdgeLmException;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * How the HTTP server listens and what it accepts.
 *
 * @param host         address to bind (default 127.0.0.1); any other than a loopback address needs an API key
 * @param port         TCP port; 0 picks a free one
 * @param apiKey       the bearer token clients must send, or null for none (loopback only)
 * @param maxBodyBytes the largest request body accepted (413 beyond)
 * @param maxMessages  the most messages one chat request may hold
 */
public record ServerOptions(String host, int port, String apiKey, int maxBodyBytes, int maxMessages) {
    /** EdgeLM's default port: not 8080 (llama-server's, and every other web tool's). */
    public static final int DEFAULT_PORT = 8431;
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_MAX_BODY_BYTES = 8 << 20;
    public static final int DEFAULT_MAX_MESSAGES = 4096;

    public ServerOptions {
        if (port < 0 || port > 65535) {
            throw new EdgeLmException("--port must be in 0..65535, got " + port);
        }
        if (apiKey != null && apiKey.isBlank()) {
            throw new EdgeLmException("--api-key must not be empty");
        }
        if (maxBodyBytes < 1024 || maxMessages < 1) {
            throw new EdgeLmException("the body limit must be >= 1024 bytes and the message limit >= 1");
        }
        if (apiKey == null && !isLoopback(host)) {
            throw new EdgeLmException("refusing to listen on " + host + " without an API key: anyone who can reach it could use "
                    + "the model. Give --api-key KEY (clients send 'Authorization: Bearer KEY'), or keep the default --host "
                    + DEFAULT_HOST);
        }
    }

    public static ServerOptions loopback(int port) {
        return new ServerOptions(DEFAULT_HOST, port, null, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_MESSAGES);
    }

    public ServerOptions withApiKey(String key) {
        return new ServerOptions(host, port, key, maxBodyBytes, maxMessages);
    }

    public ServerOptions withLimits(int bodyBytes, int messages) {
        return new ServerOptions(host, port, apiKey, bodyBytes, messages);
    }

    static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new EdgeLmException("--host " + host + ": unknown host");
        }
    }
}
