package dev.edgelm.jinja;

import java.util.ArrayList;
import java.util.List;

/**
 * What jinja2's {@code map}, {@code select}, {@code reject}, {@code selectattr}, {@code rejectattr} and
 * {@code items} filters return: a Python generator, not a list. It iterates once (a second loop over it sees
 * nothing), is always true, and has no length, index or JSON form; printing it shows a memory address, which
 * EdgeLM refuses as unsupported rather than print something else. The items are computed eagerly.
 */
final class Generator extends ArrayList<Object> {
    private boolean consumed;

    Generator(List<Object> items) {
        super(items);
    }

    /** The items on the first iteration, none after. */
    List<Object> consume() {
        if (consumed) {
            return List.of();
        }
        consumed = true;
        return this;
    }
}
