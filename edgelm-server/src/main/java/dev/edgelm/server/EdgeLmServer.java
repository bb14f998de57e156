package dev.edgelm.server;

import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * The OpenAI-compatible HTTP server: Jetty 12 core handlers (no servlet container), every request on its own
 * virtual thread, so handlers are plain blocking code and a stream is a loop of writes. It listens at once and
 * answers 503 until {@link #serve} hands it a loaded model (so {@code /health} can say "loading").
 *
 * <p>{@link #stop()} drains: new requests are refused (503), running ones finish, then the model is closed.
 */
public final class EdgeLmServer implements AutoCloseable {
    /** How long a connection may stay silent (llama-server's --timeout default is an hour). */
    static final long IDLE_TIMEOUT_MS = 3_600_000;
    /** How long {@link #stop()} waits for running requests. */
    static final long DRAIN_TIMEOUT_MS = 600_000;

    private final Server jetty;
    private final ServerConnector connector;
    private final ApiHandler api;
    private final GracefulHandler graceful;

    private EdgeLmServer(ServerOptions options) {
        VirtualThreadPool threads = new VirtualThreadPool();
        threads.setName("edgelm-http");
        jetty = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        http.setRequestHeaderSize(16 << 10);
        connector = new ServerConnector(jetty, new HttpConnectionFactory(http));
        connector.setHost(options.host());
        connector.setPort(options.port());
        connector.setIdleTimeout(IDLE_TIMEOUT_MS);
        jetty.addConnector(connector);
        api = new ApiHandler(options);
        graceful = new GracefulHandler(api);
        jetty.setHandler(graceful);
        jetty.setStopTimeout(DRAIN_TIMEOUT_MS);
        jetty.setStopAtShutdown(false); // the caller decides (edgelm serve drains on SIGTERM)
    }

    /** Starts listening; requests get 503 ("Loading model") until {@link #serve} is called. */
    public static EdgeLmServer start(ServerOptions options) {
        EdgeLmServer s = new EdgeLmServer(options);
        try {
            s.jetty.start();
        } catch (IOException e) {
            s.close();
            throw new EdgeLmException("cannot listen on " + options.host() + ":" + options.port() + ": " + e.getMessage());
        } catch (Exception e) {
            s.close();
            throw new EdgeLmException("cannot start the server on " + options.host() + ":" + options.port() + ": " + e.getMessage());
        }
        return s;
    }

    /** Starts serving {@code model}; the server owns it from now on and closes it in {@link #stop()}. */
    public void serve(ServedModel model) {
        api.setModel(model);
    }

    /** The port listened on (the one chosen when the options said 0). */
    public int port() {
        return connector.getLocalPort();
    }

    public String host() {
        return connector.getHost();
    }

    /** Requests being handled now (streams included). */
    public long activeRequests() {
        return graceful.getCurrentRequestCount();
    }

    /** Refuses new requests, waits for running ones, closes the connections and then the model. */
    public void stop() {
        try {
            graceful.shutdown().get(DRAIN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // drain as far as it went; stop anyway
        }
        try {
            jetty.stop();
        } catch (Exception e) {
            // already stopped or failing to: nothing more to do
        }
        ServedModel m = api.model();
        if (m != null) {
            m.close();
        }
    }

    @Override
    public void close() {
        stop();
    }
}
