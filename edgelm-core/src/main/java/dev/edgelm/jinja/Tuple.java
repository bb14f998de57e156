package dev.edgelm.jinja;

import java.util.AbstractList;
import java.util.List;

/** A Python tuple: an immutable list that prints as {@code (a, b)} and never equals a list. */
final class Tuple extends AbstractList<Object> {
    private final Object[] items;

    Tuple(List<?> items) {
        this.items = items.toArray();
    }

    Tuple(Object... items) {
        this.items = items.clone();
    }

    @Override
    public Object get(int index) {
        return items[index];
    }

    @Override
    public int size() {
        return items.length;
    }
}
