package dev.edgelm.server;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Session;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.TokenLogprobs;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link GenerationBackend} of plain {@link Session}s: {@code parallel} slots, each a session on its own
 * platform thread, whose forward passes take turns on the engine. A request goes to the idle slot whose state
 * shares the longest prefix with its prompt (reusing it: only the rest is prefilled), else waits in a bounded
 * FIFO queue. Each slot keeps snapshots of its state at the request's boundaries and at the end of the prompt,
 * within a memory budget, so that a conversation re-sent with one more turn rolls back to the last shared
 * message instead of prefilling from the start.
 */
public final class SessionPool implements GenerationBackend {
    private final List<Slot> slots = new ArrayList<>();
    private final Deque<Job> queue = new ArrayDeque<>();
    private final int queueLimit;
    private final long snapshotBudgetPerSlot;
    private boolean closed;
    private final AtomicLong promptTokens = new AtomicLong();
    private final AtomicLong cachedTokens = new AtomicLong();
    private final AtomicLong prefilledTokens = new AtomicLong();
    private final AtomicLong prefillNanos = new AtomicLong();
    private final AtomicLong decodedTokens = new AtomicLong();
    private final AtomicLong decodeNanos = new AtomicLong();

    /**
     * @param parallel      generations running at once
     * @param queueLimit    requests that may wait for a slot; more are refused
     * @param snapshotBytes memory all slots' snapshots may hold together
     */
    public SessionPool(Engine engine, int parallel, int queueLimit, long snapshotBytes) {
        if (parallel < 1 || queueLimit < 0) {
            throw new IllegalArgumentException("parallel must be >= 1 and the queue >= 0");
        }
        this.queueLimit = queueLimit;
        this.snapshotBudgetPerSlot = snapshotBytes / parallel;
        for (int i = 0; i < parallel; i++) {
            Slot s = new Slot(engine.newSession(), i);
            slots.add(s);
            s.thread.start();
        }
    }

    @Override
    public Handle submit(Request request) {
        Job job = new Job(request);
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the server is shutting down");
            }
            Slot best = null;
            int bestReuse = -1;
            for (Slot s : slots) {
                if (s.job == null) {
                    int r = s.reusable(request.prompt());
                    if (r > bestReuse) {
                        best = s;
                        bestReuse = r;
                    }
                }
            }
            if (best != null) {
                best.job = job;
                notifyAll();
            } else if (queue.size() < queueLimit) {
                queue.addLast(job);
            } else {
                throw new QueueFullException("all " + slots.size() + " slots are busy and " + queue.size()
                        + " requests are waiting (--queue " + queueLimit + ")");
            }
        }
        return job;
    }

    @Override
    public synchronized Stats stats() {
        int active = 0;
        long bytes = 0;
        for (Slot s : slots) {
            active += s.job != null ? 1 : 0;
            bytes += s.snapshotBytes;
        }
        return new Stats(active, queue.size(), promptTokens.get(), cachedTokens.get(), prefilledTokens.get(),
                prefillNanos.get() / 1e9, decodedTokens.get(), decodeNanos.get() / 1e9, bytes);
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        for (Slot s : slots) {
            try {
                s.thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The next job for {@code slot}: its assigned one, else the oldest queued; null once closed and drained. */
    private synchronized Job next(Slot slot) throws InterruptedException {
        while (true) {
            if (slot.job == null && !queue.isEmpty()) {
                slot.job = queue.pollFirst();
            }
            if (slot.job != null) {
                return slot.job;
            }
            if (closed) {
                return null;
            }
            wait();
        }
    }

    private synchronized void done(Slot slot) {
        slot.job = null;
        notifyAll();
    }

    private synchronized boolean dequeue(Job job) {
        return queue.remove(job);
    }

    private final class Slot implements Runnable {
        final Session session;
        final Thread thread;
        final List<Session.Checkpoint> snapshots = new ArrayList<>();
        long snapshotBytes;
        Job job; // guarded by the pool

        Slot(Session session, int index) {
            this.session = session;
            this.thread = Thread.ofPlatform().name("edgelm-slot-" + index).daemon(true).unstarted(this);
        }

        /** Prompt tokens this slot's state could keep for {@code prompt}. Called under the pool's lock. */
        int reusable(int[] prompt) {
            int[] held = session.tokens();
            int common = Math.min(commonPrefix(held, prompt), prompt.length - 1);
            if (common == held.length) {
                return common;
            }
            int best = 0;
            for (Session.Checkpoint c : snapshots) {
                if (c.length() <= common) {
                    best = Math.max(best, c.length());
                }
            }
            return best;
        }

        @Override
        public void run() {
            while (true) {
                Job j;
                try {
                    j = next(this);
                } catch (InterruptedException e) {
                    return;
                }
                if (j == null) {
                    return;
                }
                try {
                    j.complete(runJob(j));
                } catch (RuntimeException | Error e) {
                    forget(); // the state may be half-way: do not reuse it
                    j.fail(e);
                } finally {
                    done(this);
                }
            }
        }

        private GenerationResult runJob(Job j) {
            Request r = j.request;
            if (j.cancelled) {
                return cancelledResult(r);
            }
            int[] prompt = r.prompt();
            int kept;
            synchronized (SessionPool.this) {
                kept = reusable(prompt);
            }
            restore(prompt, kept);
            j.cached = kept;
            long start = System.nanoTime();
            int from = kept;
            for (int b : r.boundaries()) {
                if (b > from && b < prompt.length) {
                    session.prefill(Arrays.copyOfRange(prompt, from, b));
                    snapshot();
                    from = b;
                }
            }
            session.prefill(Arrays.copyOfRange(prompt, from, prompt.length));
            snapshot();
            long prefilled = System.nanoTime();
            promptTokens.addAndGet(prompt.length);
            cachedTokens.addAndGet(kept);
            prefilledTokens.addAndGet(prompt.length - kept);
            prefillNanos.addAndGet(prefilled - start);
            j.started = true;
            if (j.cancelled) {
                return cancelledResult(r);
            }
            GenerationListener inner = r.listener();
            GenerationResult result = session.generate(r.options(), r.decoder(), new GenerationListener() {
                @Override
                public void onToken(int id) {
                    inner.onToken(id);
                    if (j.cancelled) {
                        session.cancel(); // from the generating thread: it stops after this token
                    }
                }

                @Override
                public void onText(String piece) {
                    inner.onText(piece);
                }

                @Override
                public void onLogprobs(TokenLogprobs logprobs) {
                    inner.onLogprobs(logprobs);
                }
            });
            decodedTokens.addAndGet(result.tokens().length);
            decodeNanos.addAndGet(System.nanoTime() - prefilled);
            return result;
        }

        /** Returns the state to {@code kept} tokens of {@code prompt}: kept as is, rolled back, or reset. */
        private void restore(int[] prompt, int kept) {
            int[] held = session.tokens();
            if (kept == held.length && commonPrefix(held, prompt) >= kept) {
                return;
            }
            Session.Checkpoint best = null;
            for (Session.Checkpoint c : snapshots) {
                if (c.length() == kept) {
                    best = c;
                }
            }
            if (best == null || kept == 0) {
                forget();
                return;
            }
            session.rollback(best);
            snapshots.removeIf(c -> c.length() > kept);
            recount();
        }

        private void snapshot() {
            Session.Checkpoint c = session.checkpoint();
            snapshots.removeIf(s -> s.length() == c.length());
            snapshots.add(c);
            recount();
            while (snapshotBytes > snapshotBudgetPerSlot && !snapshots.isEmpty()) {
                snapshots.removeFirst();
                recount();
            }
        }

        private void recount() {
            long b = 0;
            for (Session.Checkpoint c : snapshots) {
                b += c.bytes();
            }
            snapshotBytes = b;
        }

        private void forget() {
            session.reset();
            snapshots.clear();
            snapshotBytes = 0;
        }
    }

    private static GenerationResult cancelledResult(Request r) {
        return new GenerationResult(new int[0], "", StopReason.CANCELLED, -1, null, r.options().seed().orElse(0));
    }

    private static int commonPrefix(int[] a, int[] b) {
        int i = Arrays.mismatch(a, b);
        return i < 0 ? Math.min(a.length, b.length) : i;
    }

    private final class Job implements Handle {
        final Request request;
        final CompletableFuture<GenerationResult> result = new CompletableFuture<>();
        volatile boolean cancelled;
        volatile boolean started;
        volatile int cached;

        Job(Request request) {
            this.request = request;
        }

        @Override
        public void cancel() {
            cancelled = true;
            if (dequeue(this)) {
                result.complete(cancelledResult(request));
            }
        }

        void complete(GenerationResult r) {
            result.complete(r);
        }

        void fail(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public GenerationResult join() throws InterruptedException {
            try {
                return result.get();
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof RuntimeException re) {
                    throw re;
                }
                if (c instanceof Error err) {
                    throw err;
                }
                throw new IllegalStateException(c);
            }
        }

        @Override
        public int cachedTokens() {
            return cached;
        }

        @Override
        public int promptTokens() {
            return request.prompt().length;
        }
    }
}
