package dev.edgelm.eval;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A request to stop a long evaluation (Ctrl+C): loops check {@link #requested()} between units of work and
 * return what they finished; a running generation is cancelled through the hooks it registers.
 */
public final class Stop {
    private final AtomicBoolean requested = new AtomicBoolean();
    private final List<Runnable> hooks = new ArrayList<>();

    public static Stop never() {
        return new Stop();
    }

    public boolean requested() {
        return requested.get();
    }

    /** Requests the stop (from any thread) and runs the registered hooks. */
    public void request() {
        requested.set(true);
        List<Runnable> copy;
        synchronized (hooks) {
            copy = List.copyOf(hooks);
        }
        copy.forEach(Runnable::run);
    }

    /** Runs {@code hook} when a stop is requested while it is registered; returns what unregisters it. */
    public Runnable onRequest(Runnable hook) {
        synchronized (hooks) {
            hooks.add(hook);
        }
        if (requested()) {
            hook.run();
        }
        return () -> {
            synchronized (hooks) {
                hooks.remove(hook);
            }
        };
    }
}
