package dev.edgelm.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** One HTTP/1.1 exchange on a plain socket, read line by line (so a test can hang up in the middle of a stream). */
final class RawHttp implements AutoCloseable {
    final Socket socket;
    final BufferedReader in;
    final int status;

    RawHttp(int port, String path, String body) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(60_000);
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        OutputStream out = socket.getOutputStream();
        out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + "Content-Length: " + b.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.flush();
        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        String statusLine = in.readLine();
        status = Integer.parseInt(statusLine.split(" ")[1]);
        String h;
        while ((h = in.readLine()) != null && !h.isEmpty()) {
            // headers
        }
    }

    /** The next SSE data payload (chunked transfer framing skipped), or null at the end. */
    String nextData() throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith("data: ")) {
                return line.substring(6);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
