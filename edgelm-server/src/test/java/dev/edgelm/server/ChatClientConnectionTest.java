package dev.edgelm.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ChatClient} without a model: a server that cannot be reached is named with the reason, and
 * {@link ChatClient#cancel()} stops every chat under way on one client, from another thread.
 */
class ChatClientConnectionTest {
    private static ObjectNode request() {
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("model", "m");
        body.putArray("messages").addObject().put("role", "user").put("content", "hi");
        return body;
    }

    @Test
    void anUnknownHostIsNamedWithTheUrl() {
        // .invalid never resolves (RFC 6761)
        String url = "http://nosuchhost.invalid:8080";
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> new ChatClient(url, null).chat(request(), s -> { }, s -> { }));
        assertTrue(e.getMessage().startsWith("cannot connect to " + url + ": unknown host 'nosuchhost.invalid'"), e.getMessage());
    }

    @Test
    void aRefusedConnectionIsNamedWithTheUrl() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        String url = "http://127.0.0.1:" + port;
        EdgeLmException e = assertThrows(EdgeLmException.class, () -> new ChatClient(url, null).chat(request(), s -> { }, s -> { }));
        assertTrue(e.getMessage().startsWith("cannot connect to " + url + ": connection refused"), e.getMessage());
    }

    /**
     * Two chats on one client against a server that accepts and never answers: one cancel() from a third thread
     * ends both (each chat keeps its own reader, so the second chat does not hide the first from the cancel).
     */
    @Test
    void oneCancelStopsEveryChatUnderWay() throws Exception {
        List<Socket> held = new CopyOnWriteArrayList<>();
        CountDownLatch accepted = new CountDownLatch(2);
        try (ServerSocket stalled = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        held.add(stalled.accept());
                        accepted.countDown();
                    }
                } catch (IOException e) {
                    // closed at the end of the test
                }
            });
            ChatClient client = new ChatClient("http://127.0.0.1:" + stalled.getLocalPort(), null);
            ExecutorService chats = Executors.newFixedThreadPool(2); // platform threads: chat() reads on a thread of its own
            try {
                Future<ChatClient.Result> a = chats.submit(() -> client.chat(request(), s -> { }, s -> { }));
                Future<ChatClient.Result> b = chats.submit(() -> client.chat(request(), s -> { }, s -> { }));
                assertTrue(accepted.await(60, TimeUnit.SECONDS), "both chats connected");
                client.cancel();
                assertEquals("cancelled", a.get(60, TimeUnit.SECONDS).finishReason());
                assertEquals("cancelled", b.get(60, TimeUnit.SECONDS).finishReason());
            } finally {
                chats.shutdownNow();
                for (Socket s : held) {
                    s.close();
                }
            }
            stalled.close();
            acceptor.join(10_000);
        }
    }
}
