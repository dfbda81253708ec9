package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.util.Optional;

/** The control plane's port to the fleet: GET /fleet. Never blocks: a cached view. */
public interface FleetStatus {

    /** A router with clustering off. */
    FleetStatus NOT_IN_FLEET = Optional::empty;

    /** This router's view of the fleet; empty when clustering is off. */
    Optional<JsonObject> view();
}
