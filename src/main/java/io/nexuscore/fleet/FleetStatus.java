package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.util.Optional;

/** The control plane's port to the fleet: GET /fleet. Never blocks: a cached view. */
public interface FleetStatus {

    /** A router with clustering off. */
    FleetStatus NOT_IN_FLEET = Optional::empty;

    /** This router's view of the fleet; empty when clustering is off. */
    Optional<JsonObject> view();

    /**
     * The control plane changed the policy here: sync now rather than at the next period. Never
     * blocks; without a fleet, nothing to do.
     */
    default void changedHere() {
    }
}
