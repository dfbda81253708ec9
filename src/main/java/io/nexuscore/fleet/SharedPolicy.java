package io.nexuscore.fleet;

import java.util.Optional;

/**
 * The fleet's policy document in the replicated map. Calls block the calling (fleet) thread for at
 * most a bounded time and throw {@link Unreachable} past it: a router cut off from the fleet keeps
 * serving with what it has.
 */
public interface SharedPolicy {

    /** The fleet's current document; empty when no router has written one yet. */
    Optional<PolicyDoc> read();

    /**
     * Writes {@code next} only if the map still holds {@code expected} (empty: only if it holds none).
     *
     * @return false when another writer got there first
     */
    boolean compareAndSet(Optional<PolicyDoc> expected, PolicyDoc next);

    /** The map did not answer in time (a partition, a fleet that is starting or stopping). */
    final class Unreachable extends RuntimeException {
        public Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
