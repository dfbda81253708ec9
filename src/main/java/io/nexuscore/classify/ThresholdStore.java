package io.nexuscore.classify;

/**
 * The live thresholds. In kernel mode they live in the pinned {@code score_thresholds} map, which
 * operators and the kernel feedback loop may change behind the router's back: always read, never cache.
 *
 * <p>One writer at a time: writers replace the whole value with {@link #compareAndSet} against the
 * value they read, so an API write, the kernel's adaptive timer and a tool never lose each other's
 * changes.
 */
public interface ThresholdStore {

    /** The stored value, as any tool left it (possibly invalid). */
    ThresholdState state();

    /**
     * What a read costs: both stores of the router are memory (the kernel's score_thresholds is
     * mmap'ed), so event loops read them directly and a PATCH applies to the very next request.
     */
    default ReadCost readCost() {
        return ReadCost.MEMORY;
    }

    /** Replaces {@code expected} (all of it: thresholds, writer, version) with {@code next}; false when it changed. */
    boolean compareAndSet(ThresholdState expected, ThresholdState next);

    /** The thresholds classification uses: the stored ones, clamped to a safe order when invalid. */
    default Thresholds read() {
        return state().effective();
    }

    /** Sets the thresholds whatever is stored (start-up, tests): a compare-and-set loop as the API. */
    default void write(Thresholds thresholds) {
        ThresholdState current;
        do {
            current = state();
        } while (!compareAndSet(current, current.next(thresholds, ThresholdState.WRITER_API)));
    }
}
