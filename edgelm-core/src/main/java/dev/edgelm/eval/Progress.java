package dev.edgelm.eval;

/** Where a long evaluation stands; the command line draws it as a bar with an ETA. */
@FunctionalInterface
public interface Progress {
    Progress NONE = (done, total, label) -> {};

    /** {@code done} of {@code total} units finished; {@code label} says what the units are. */
    void update(long done, long total, String label);
}
