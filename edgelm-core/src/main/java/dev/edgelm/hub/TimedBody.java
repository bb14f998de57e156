package dev.edgelm.hub;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A response body read as an {@link InputStream} whose reads give up when no byte arrives for a set time.
 * The JDK's {@code BodyHandlers.ofInputStream()} has a timeout for the headers only: a server that stops sending
 * mid-body blocks its reads forever. This subscriber asks for one buffer list at a time (so a fast server cannot
 * fill memory) and waits for each with a deadline; on timeout it cancels the exchange and throws {@link Stalled}.
 */
final class TimedBody extends InputStream implements HttpResponse.BodySubscriber<InputStream> {
    private static final Object END = new Object();

    /** No data arrived within the read timeout. */
    static final class Stalled extends IOException {
        Stalled(String message) {
            super(message);
        }
    }

    private final long timeoutNanos;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final CompletableFuture<Flow.Subscription> subscription = new CompletableFuture<>();
    private Iterator<ByteBuffer> buffers;
    private ByteBuffer current;
    private boolean done;

    private TimedBody(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    /** A body handler giving each response its own timed stream. */
    static HttpResponse.BodyHandler<InputStream> handler(Duration timeout) {
        return info -> new TimedBody(timeout);
    }

    @Override
    public CompletionStage<InputStream> getBody() {
        return CompletableFuture.completedStage(this);
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        if (!subscription.complete(s)) {
            s.cancel();
            return;
        }
        s.request(1);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
        queue.add(item);
    }

    @Override
    public void onError(Throwable throwable) {
        queue.add(throwable);
    }

    @Override
    public void onComplete() {
        queue.add(END);
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (current == null || !current.hasRemaining()) {
            if (buffers != null && buffers.hasNext()) {
                current = buffers.next();
                continue;
            }
            if (done) {
                return -1;
            }
            Object next;
            try {
                next = queue.poll(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new IOException("download interrupted");
            }
            if (next == null) {
                close();
                throw new Stalled("no data for " + Duration.ofNanos(timeoutNanos).toSeconds() + " s");
            }
            if (next == END) {
                done = true;
                return -1;
            }
            if (next instanceof Throwable t) {
                done = true;
                throw t instanceof IOException io ? io : new IOException(t);
            }
            @SuppressWarnings("unchecked")
            List<ByteBuffer> list = (List<ByteBuffer>) next;
            buffers = list.iterator();
            subscription.getNow(null).request(1);
        }
        int n = Math.min(len, current.remaining());
        current.get(b, off, n);
        return n;
    }

    @Override
    public void close() {
        done = true;
        Flow.Subscription s = subscription.getNow(null);
        if (s != null) {
            s.cancel();
        }
    }
}
