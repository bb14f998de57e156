package dev.edgelm.engine.batch;

import dev.edgelm.engine.Engine;
import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.GenerationResult;
import dev.edgelm.engine.Sampler;
import dev.edgelm.engine.StopReason;
import dev.edgelm.engine.StopStringMatcher;
import dev.edgelm.engine.TokenDecoder;
import dev.edgelm.engine.TokenLogprobs;
import dev.edgelm.model.Qwen35Model;
import dev.edgelm.model.SequenceState;
import dev.edgelm.util.EdgeLmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Continuous batching over one {@link Engine}: up to {@link BatchOptions#maxParallel()} sequences at once,
 * each with its own {@link SequenceState}, on one scheduler thread. Each step of that thread:
 * <ol>
 *   <li>takes waiting requests into free slots, in FIFO order, each starting from the longest prefix of its
 *       prompt that the prefix cache holds;</li>
 *   <li>ends the generations cancelled since the last step;</li>
 *   <li>runs one prefill chunk (at most {@link BatchOptions#prefillChunk()} tokens) of the oldest slot
 *       still prefilling, so a new prompt holds the others up by one chunk per step at most;</li>
 *   <li>runs one decode step of every slot that is generating: one forward pass for all of them
 *       ({@link Qwen35Model#forwardBatch}: the weights are read once per step), then samples each.</li>
 * </ol>
 * A request's tokens and text are those {@code Session.generate} produces for the same prompt and options
 * (the same {@link Sampler}, stop tokens, {@link StopStringMatcher}, token limit and context rule). Greedy
 * output matches a session's token for token: decode steps compute each sequence bit for bit as a
 * one-token forward call does, and prompts are cut into chunks at fixed absolute positions (multiples of
 * the chunk size and of the snapshot interval, and the request's {@code snapshotAt} offsets), so a prompt
 * resumed from the cache is cut where a cold run cuts it.
 *
 * <p>Listener callbacks run on the scheduler thread: a slow listener slows every sequence. A listener that
 * throws ends its own generation (its {@link Generation#join()} rethrows), not the others.
 */
public final class BatchScheduler implements AutoCloseable {
    private final Qwen35Model model;
    private final BatchOptions options;
    private final int vocab;
    private final PrefixCache cache;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    /** Signalled when a deferred snapshot has been taken and when the scheduler closes. */
    private final Condition snapshotTaken = lock.newCondition();
    private final ArrayDeque<Generation> queue = new ArrayDeque<>();
    private final List<Slot> active = new ArrayList<>();
    private final ArrayDeque<SequenceState> freeStates = new ArrayDeque<>();
    /** Snapshots wanted where a prefill did not stop ({@link GenerationRequest#snapshotLater()}); scheduler thread only. */
    private final ArrayDeque<Deferred> deferred = new ArrayDeque<>();
    private final float[] batchLogits;
    private final Thread thread;
    private boolean closed;

    private volatile int activeCount;
    private volatile long requests;
    private volatile long cacheHits;
    private volatile long tokensReused;
    private volatile long prefillTokens;
    private volatile long decodeTokens;
    private volatile long decodeSteps;
    private volatile int cacheEntries;
    private volatile long cacheBytes;
    private volatile long prefillNanos;
    private volatile long decodeNanos;
    private volatile long decodeCpuNanos;
    private volatile long deferredSnapshots;
    private volatile long deferredTokens;
    private volatile long deferredNanos;
    private final java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    public BatchScheduler(Engine engine, BatchOptions options) {
        this.model = engine.model();
        this.options = options;
        this.vocab = model.config().vocabSize();
        this.cache = new PrefixCache(options.cacheRamBytes());
        this.batchLogits = new float[Math.multiplyExact(options.maxParallel(), vocab)];
        this.thread = new Thread(this::loop, "edgelm-batch-scheduler");
        thread.setDaemon(true);
        thread.start();
    }

    public BatchOptions options() {
        return options;
    }

    /**
     * Queues a request and returns at once. Input the request can be checked for up front (an empty prompt,
     * token ids outside the vocabulary, a prompt or token limit beyond the context, stop strings without a
     * decoder, snapshot offsets outside the prompt) fails here with an {@link EdgeLmException}.
     */
    public Generation submit(GenerationRequest request) {
        check(request);
        Generation g = new Generation(request);
        lock.lock();
        try {
            if (closed) {
                throw new EdgeLmException("the batch scheduler is closed");
            }
            queue.add(g);
            work.signal();
        } finally {
            lock.unlock();
        }
        return g;
    }

    private void check(GenerationRequest r) {
        if (r == null || r.prompt() == null || r.prompt().length == 0) {
            throw new EdgeLmException("nothing to generate from: the prompt is empty");
        }
        if (r.options() == null) {
            throw new EdgeLmException("generation options are missing");
        }
        int[] prompt = r.prompt();
        model.checkTokens(prompt, 0, prompt.length);
        int context = options.contextLength();
        if (prompt.length > context) {
            throw new EdgeLmException("a prompt of " + prompt.length + " tokens does not fit the context of "
                    + context + " tokens");
        }
        OptionalInt max = r.options().maxNewTokens();
        if (max.isPresent() && (long) prompt.length + max.getAsInt() > context) {
            throw new EdgeLmException("cannot generate up to " + max.getAsInt() + " tokens: the context has room for "
                    + (context - prompt.length) + " more (capacity " + context + ", prompt " + prompt.length + ")");
        }
        if (!r.options().stopStrings().isEmpty() && r.decoder() == null) {
            throw new EdgeLmException("stop strings need a token decoder (a tokenizer) to see the text");
        }
        for (int[] offsets : new int[][] {r.snapshotAt(), r.snapshotLater()}) {
            if (offsets != null) {
                for (int at : offsets) {
                    if (at < 1 || at > prompt.length) {
                        throw new EdgeLmException((offsets == r.snapshotAt() ? "snapshotAt" : "snapshotLater")
                                + " offset " + at + " is outside the prompt (1.." + prompt.length + ")");
                    }
                }
            }
        }
    }

    /** Snapshots taken after their request, at its {@link GenerationRequest#snapshotLater()} offsets, so far. */
    public long deferredSnapshots() {
        return deferredSnapshots;
    }

    /**
     * Waits until at least {@code count} deferred snapshots have been taken ({@link #deferredSnapshots()}), the
     * scheduler closes or {@code timeout} passes; true when the count was reached. Woken by each snapshot taken,
     * not by polling.
     */
    public boolean awaitDeferredSnapshots(long count, java.time.Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (deferredSnapshots < count && !closed && left > 0) {
                left = snapshotTaken.awaitNanos(left);
            }
            return deferredSnapshots >= count;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Prompt tokens run through the model to take those snapshots (not in {@link BatchStats#prefillTokens()},
     * which counts the requests' own prefill).
     */
    public long deferredSnapshotTokens() {
        return deferredTokens;
    }

    /** Seconds spent taking deferred snapshots. */
    public double deferredSnapshotSeconds() {
        return deferredNanos / 1e9;
    }

    public BatchStats stats() {
        int queued;
        lock.lock();
        try {
            queued = queue.size();
        } finally {
            lock.unlock();
        }
        return new BatchStats(activeCount, queued, requests, cacheHits, tokensReused, prefillTokens, decodeTokens,
                decodeSteps, cacheEntries, cacheBytes, prefillNanos / 1e9, decodeNanos / 1e9, decodeCpuNanos / 1e9);
    }

    /** Cancels every queued and running generation (they complete as cancelled) and stops the scheduler thread. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            work.signal();
            snapshotTaken.signalAll();
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the scheduler thread ----

    private enum Phase { PREFILL, DECODE }

    /** One running request. */
    private final class Slot {
        final Generation gen;
        final int[] prompt;
        final GenerationOptions opts;
        final GenerationListener listener;
        final SequenceState state;
        /** Where prefill chunks end besides the prompt's end (absolute positions, ascending). */
        final int[] cuts;
        final boolean snapshotAtCuts;
        /**
         * Admitted while other sequences ran: the request's {@link GenerationRequest#snapshotLater()} offsets are
         * cuts of its own prefill, snapshotted inline, instead of snapshots deferred to an idle moment that a busy
         * scheduler may never have (and whose prefill would stall every running sequence when the next turn comes).
         */
        boolean laterInline;
        Phase phase = Phase.PREFILL;
        final float[] logits = new float[vocab];
        Sampler sampler;
        long seed;
        int limit;
        TokenDecoder.Stream text;
        StopStringMatcher matcher;
        final StringBuilder emittedText = new StringBuilder();
        int[] emitted = new int[16];
        int count;
        int pending = -1;

        Slot(Generation gen, SequenceState state, int[] cuts, boolean snapshotAtCuts) {
            this.gen = gen;
            this.prompt = gen.request().prompt();
            this.opts = gen.request().options();
            GenerationListener l = gen.request().listener();
            this.listener = l == null ? GenerationListener.NONE : l;
            this.state = state;
            this.cuts = cuts;
            this.snapshotAtCuts = snapshotAtCuts;
        }
    }

    private void loop() {
        List<Generation> admitted = new ArrayList<>();
        List<Generation> dropped = new ArrayList<>();
        try {
            while (true) {
                lock.lock();
                try {
                    while (!closed && queue.isEmpty() && active.isEmpty() && deferred.isEmpty()) {
                        work.awaitUninterruptibly();
                    }
                    if (closed) {
                        break;
                    }
                    for (Iterator<Generation> it = queue.iterator(); it.hasNext(); ) {
                        Generation g = it.next();
                        if (g.cancelRequested) {
                            it.remove();
                            dropped.add(g);
                        }
                    }
                    while (active.size() + admitted.size() < options.maxParallel() && !queue.isEmpty()) {
                        admitted.add(queue.poll());
                    }
                } finally {
                    lock.unlock();
                }
                for (Generation g : dropped) {
                    complete(g, new GenerationResult(new int[0], "", StopReason.CANCELLED, -1, null,
                            g.request().options().seed().orElse(0)));
                }
                dropped.clear();
                for (Generation g : admitted) {
                    admit(g);
                }
                admitted.clear();
                if (active.isEmpty()) {
                    runDeferred(); // nothing else to do: the snapshots requests left for later
                    continue;
                }
                step();
            }
        } catch (Throwable t) {
            // A bug of the scheduler itself: fail everything rather than hang the callers.
            for (Slot s : new ArrayList<>(active)) {
                fail(s, t);
            }
            failQueued(t);
            return;
        }
        for (Slot s : new ArrayList<>(active)) {
            finish(s, StopReason.CANCELLED, -1);
        }
        failQueued(null);
    }

    private void failQueued(Throwable t) {
        List<Generation> rest;
        lock.lock();
        try {
            closed = true;
            snapshotTaken.signalAll();
            rest = new ArrayList<>(queue);
            queue.clear();
        } finally {
            lock.unlock();
        }
        for (Generation g : rest) {
            if (t == null) {
                complete(g, new GenerationResult(new int[0], "", StopReason.CANCELLED, -1, null, 0));
            } else {
                g.finishedAt = System.nanoTime();
                g.completion().completeExceptionally(t);
            }
        }
    }

    private void admit(Generation g) {
        int[] prompt = g.request().prompt();
        boolean busy = !active.isEmpty();
        if (!busy) {
            takeDeferredPrefixOf(prompt); // nothing else runs: no sequence waits while these are prefilled
        }
        SequenceState state = freeStates.isEmpty() ? model.newState(options.contextLength()) : freeStates.poll();
        int cached = 0;
        PrefixCache.Entry hit = cache.enabled() ? cache.longestPrefix(prompt, prompt.length - 1) : null;
        if (hit != null) {
            state.restore(hit.snapshot());
            cached = hit.length();
            cacheHits++;
            tokensReused += cached;
        } else {
            state.reset();
        }
        requests++;
        g.cachedTokens = cached;
        g.admittedAt = System.nanoTime();
        Slot s = new Slot(g, state, cuts(g.request(), cached, busy), cache.enabled());
        s.laterInline = busy;
        active.add(s);
        activeCount = active.size();
    }

    /**
     * The positions in (from, prompt end) where prefill chunks end: multiples of the chunk size and of the
     * snapshot interval, and the request's snapshot offsets. They depend on the request only, not on where
     * it resumes, so a resumed prompt is cut exactly where a cold one is.
     */
    private int[] cuts(GenerationRequest r, int from) {
        return cuts(r, from, false);
    }

    /** As {@link #cuts(GenerationRequest, int)}; with {@code laterInline} the snapshotLater offsets are cuts too. */
    private int[] cuts(GenerationRequest r, int from, boolean laterInline) {
        int len = r.prompt().length;
        TreeSet<Integer> at = new TreeSet<>();
        for (int p = options.prefillChunk(); p < len; p += options.prefillChunk()) {
            at.add(p);
        }
        for (int p = options.snapshotInterval(); p < len; p += options.snapshotInterval()) {
            at.add(p);
        }
        for (int[] offsets : laterInline ? new int[][] {r.snapshotAt(), r.snapshotLater()} : new int[][] {r.snapshotAt()}) {
            if (offsets != null) {
                for (int p : offsets) {
                    if (p < len) {
                        at.add(p);
                    }
                }
            }
        }
        return at.tailSet(from, false).stream().mapToInt(Integer::intValue).toArray();
    }

    private void step() {
        for (Slot s : new ArrayList<>(active)) {
            if (s.gen.cancelRequested) {
                finish(s, StopReason.CANCELLED, -1);
            }
        }
        for (Slot s : active) {
            if (s.phase == Phase.PREFILL) {
                long t0 = System.nanoTime();
                prefillChunk(s);
                prefillNanos += System.nanoTime() - t0;
                break;
            }
        }
        List<Slot> decoding = new ArrayList<>();
        for (Slot s : active) {
            if (s.phase == Phase.DECODE && s.pending >= 0) {
                decoding.add(s);
            }
        }
        if (!decoding.isEmpty()) {
            long t0 = System.nanoTime();
            long c0 = processCpuNanos();
            decodeStep(decoding);
            decodeNanos += System.nanoTime() - t0;
            decodeCpuNanos += processCpuNanos() - c0;
        }
    }

    /** CPU time of the process so far, where the platform tells it (0 otherwise). */
    private long processCpuNanos() {
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? Math.max(0, sun.getProcessCpuTime()) : 0;
    }

    private void prefillChunk(Slot s) {
        int from = s.state.position();
        int end = s.prompt.length;
        boolean cut = false;
        for (int c : s.cuts) {
            if (c > from) {
                end = Math.min(end, c);
                cut = true;
                break;
            }
        }
        boolean last = end == s.prompt.length;
        try {
            if (last) {
                model.forwardLast(s.state, s.prompt, from, end - from, s.logits);
            } else {
                model.forward(s.state, s.prompt, from, end - from, Qwen35Model.Logits.NONE);
            }
        } catch (RuntimeException e) {
            fail(s, e);
            return;
        }
        prefillTokens += end - from;
        s.gen.prefilledTokens += end - from;
        s.gen.prefillChunks++;
        boolean snapshotPoint = last || (cut && (isSnapshotPoint(s.gen.request(), end)
                || s.laterInline && contains(s.gen.request().snapshotLater(), end)));
        if (snapshotPoint && cache.wants(s.prompt, end)) {
            keep(s.prompt, end, s.state);
        }
        if (last) {
            if (!s.laterInline) {
                deferSnapshots(s.gen.request(), s.gen.cachedTokens);
            }
            startGeneration(s);
        }
    }

    /** A snapshot of {@code request.prompt()[0, at)} to take later, with the request's cuts below it. */
    private record Deferred(GenerationRequest request, int at) {
        boolean isPrefixOf(int[] prompt) {
            return prompt.length > at && Arrays.equals(request.prompt(), 0, at, prompt, 0, at);
        }
    }

    /** At most this many deferred snapshots wait; the oldest is dropped beyond it. */
    private static final int MAX_DEFERRED = 16;

    private void deferSnapshots(GenerationRequest r, int cached) {
        if (r.snapshotLater() == null || !cache.enabled()) {
            return;
        }
        for (int at : r.snapshotLater()) {
            if (at > cached && at < r.prompt().length && cache.wants(r.prompt(), at)) {
                deferred.removeIf(d -> d.at == at && Arrays.equals(d.request.prompt(), 0, at, r.prompt(), 0, at));
                // only what the snapshot needs (its tokens and cuts), not the request's listener and decoder
                int[] hints = r.snapshotAt() == null ? null
                        : Arrays.stream(r.snapshotAt()).filter(p -> p < at).toArray();
                deferred.add(new Deferred(new GenerationRequest(Arrays.copyOf(r.prompt(), at), r.options(), null, null, hints), at));
                while (deferred.size() > MAX_DEFERRED) {
                    deferred.poll();
                }
            }
        }
    }

    /**
     * Before a request is admitted: the deferred snapshots its prompt extends are taken now, so that it
     * resumes from them (a chat's next turn arriving before the scheduler was idle).
     */
    private void takeDeferredPrefixOf(int[] prompt) {
        for (Iterator<Deferred> it = deferred.iterator(); it.hasNext(); ) {
            Deferred d = it.next();
            if (d.isPrefixOf(prompt)) {
                it.remove();
                takeSnapshot(d, false);
            }
        }
    }

    /** Idle: takes the oldest deferred snapshot, giving way (between chunks) to a request that arrives. */
    private void runDeferred() {
        Deferred d = deferred.poll();
        if (d != null && !takeSnapshot(d, true)) {
            deferred.addFirst(d); // interrupted by a request; the snapshots at its cuts so far are kept
        }
    }

    private boolean queueEmpty() {
        lock.lock();
        try {
            return queue.isEmpty() && !closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Prefills {@code d}'s prompt up to its offset on a spare state, from the longest cached prefix and in the
     * request's own chunks (as a cold run of that prompt cuts it), and keeps the snapshot. False when it gave way
     * to a queued request before the end.
     */
    private boolean takeSnapshot(Deferred d, boolean yieldToRequests) {
        int[] prompt = d.request.prompt();
        PrefixCache.Entry hit = cache.longestPrefix(prompt, d.at);
        if (hit != null && hit.length() == d.at) {
            return true;
        }
        SequenceState state = freeStates.isEmpty() ? model.newState(options.contextLength()) : freeStates.poll();
        long t0 = System.nanoTime();
        try {
            if (hit != null) {
                state.restore(hit.snapshot());
            } else {
                state.reset();
            }
            int[] cuts = cuts(d.request, state.position());
            int pos = state.position();
            for (int i = 0; pos < d.at; i++) {
                int end = i < cuts.length ? Math.min(cuts[i], d.at) : d.at;
                model.forward(state, prompt, pos, end - pos, Qwen35Model.Logits.NONE);
                deferredTokens += end - pos;
                pos = end;
                if (pos < d.at && isSnapshotPoint(d.request, pos) && cache.wants(prompt, pos)) {
                    keep(prompt, pos, state);
                }
                if (pos < d.at && yieldToRequests && !queueEmpty()) {
                    return false;
                }
            }
            if (cache.wants(prompt, d.at)) {
                keep(prompt, d.at, state);
                lock.lock();
                try {
                    deferredSnapshots++;
                    snapshotTaken.signalAll();
                } finally {
                    lock.unlock();
                }
            }
            return true;
        } catch (RuntimeException e) {
            return true; // a snapshot is an optimisation: without it the next request prefills more
        } finally {
            deferredNanos += System.nanoTime() - t0;
            state.reset();
            freeStates.add(state);
        }
    }

    private static boolean contains(int[] offsets, int at) {
        if (offsets != null) {
            for (int o : offsets) {
                if (o == at) {
                    return true;
                }
            }
        }
        return false;
    }

    private boolean isSnapshotPoint(GenerationRequest r, int at) {
        if (at % options.snapshotInterval() == 0) {
            return true;
        }
        int[] hints = r.snapshotAt();
        if (hints != null) {
            for (int h : hints) {
                if (h == at) {
                    return true;
                }
            }
        }
        return false;
    }

    private void keep(int[] tokens, int length, SequenceState state) {
        cache.put(tokens, length, state.snapshot());
        cacheEntries = cache.size();
        cacheBytes = cache.bytes();
    }

    /** As the start of {@code Session.generate}: the token limit, the sampler, the text stream; then the first sample. */
    private void startGeneration(Slot s) {
        s.phase = Phase.DECODE;
        GenerationOptions o = s.opts;
        int available = options.contextLength() - s.prompt.length;
        s.limit = o.maxNewTokens().orElse(available);
        s.seed = o.seed().orElseGet(() -> ThreadLocalRandom.current().nextLong());
        if (s.limit == 0) {
            finish(s, StopReason.CONTEXT_FULL, -1);
            return;
        }
        s.sampler = new Sampler(o, vocab, s.seed);
        s.sampler.observeContext(s.prompt, 0, s.prompt.length);
        s.text = s.gen.request().decoder() == null ? null : s.gen.request().decoder().open();
        s.matcher = o.stopStrings().isEmpty() ? null : new StopStringMatcher(o.stopStrings());
        sampleNext(s);
    }

    private void decodeStep(List<Slot> slots) {
        int n = slots.size();
        SequenceState[] states = new SequenceState[n];
        int[] tokens = new int[n];
        for (int i = 0; i < n; i++) {
            states[i] = slots.get(i).state;
            tokens[i] = slots.get(i).pending;
        }
        try {
            model.forwardBatch(states, tokens, batchLogits);
        } catch (RuntimeException e) {
            for (Slot s : slots) {
                fail(s, e);
            }
            return;
        }
        decodeSteps++;
        for (int i = 0; i < n; i++) {
            Slot s = slots.get(i);
            System.arraycopy(batchLogits, i * vocab, s.logits, 0, vocab);
            s.pending = -1;
            sampleNext(s);
        }
    }

    /** One step of {@code Session.generate}'s loop, from the logits in the slot. */
    private void sampleNext(Slot s) {
        if (s.gen.cancelRequested) {
            finish(s, StopReason.CANCELLED, -1);
            return;
        }
        try {
            int t = s.sampler.sample(s.logits);
            if (s.opts.isStopToken(t)) {
                finish(s, StopReason.STOP_TOKEN, t);
                return;
            }
            if (s.opts.topLogprobs() >= 0) {
                s.listener.onLogprobs(TokenLogprobs.of(s.logits, t, s.opts.topLogprobs()));
            }
            s.sampler.accept(t);
            if (s.count == s.emitted.length) {
                s.emitted = Arrays.copyOf(s.emitted, 2 * s.count);
            }
            s.emitted[s.count++] = t;
            decodeTokens++;
            if (s.count == 1) {
                s.gen.firstTokenAt = System.nanoTime();
            }
            s.listener.onToken(t);
            if (s.text != null) {
                String piece = s.text.next(t);
                release(s, s.matcher == null ? piece : s.matcher.push(piece));
                if (s.matcher != null && s.matcher.matched() != null) {
                    finish(s, StopReason.STOP_STRING, -1);
                    return;
                }
            }
            if (s.count == s.limit) {
                finish(s, s.opts.maxNewTokens().isPresent() ? StopReason.MAX_TOKENS : StopReason.CONTEXT_FULL, -1);
                return;
            }
            s.pending = t;
        } catch (RuntimeException e) {
            fail(s, e);
        }
    }

    private static void release(Slot s, String piece) {
        if (!piece.isEmpty()) {
            s.emittedText.append(piece);
            s.listener.onText(piece);
        }
    }

    /** As the end of {@code Session.generate}: the held-back text, the result; then the slot is freed. */
    private void finish(Slot s, StopReason reason, int stopToken) {
        GenerationResult result;
        try {
            if (s.text != null && reason != StopReason.STOP_STRING) {
                String tail = s.text.finish();
                if (s.matcher != null) {
                    tail = s.matcher.push(tail);
                    if (s.matcher.matched() != null) {
                        reason = StopReason.STOP_STRING;
                    } else {
                        tail += s.matcher.flush();
                    }
                }
                release(s, tail);
            }
            result = new GenerationResult(Arrays.copyOf(s.emitted, s.count), s.emittedText.toString(), reason,
                    stopToken, s.matcher == null ? null : s.matcher.matched(), s.seed);
        } catch (RuntimeException e) {
            fail(s, e);
            return;
        }
        // The state after the reply: the next turn of a chat usually extends it.
        int consumed = s.state.position();
        if (consumed > s.prompt.length && cache.enabled()) {
            int[] sequence = Arrays.copyOf(s.prompt, s.prompt.length + s.count);
            System.arraycopy(s.emitted, 0, sequence, s.prompt.length, s.count);
            if (cache.wants(sequence, consumed)) {
                keep(sequence, consumed, s.state);
            }
        }
        release(s);
        complete(s.gen, result);
    }

    private void fail(Slot s, Throwable e) {
        release(s);
        s.state.reset();
        s.gen.finishedAt = System.nanoTime();
        s.gen.completion().completeExceptionally(e);
    }

    private void release(Slot s) {
        if (active.remove(s)) {
            freeStates.add(s.state);
            activeCount = active.size();
        }
    }

    private static void complete(Generation g, GenerationResult r) {
        g.finishedAt = System.nanoTime();
        g.completion().complete(r);
    }
}
