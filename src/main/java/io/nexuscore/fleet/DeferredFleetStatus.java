package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.util.Optional;

/**
 * The fleet status the control plane is built with before the fleet is joined (the control plane
 * restores the state file first, then the fleet's policy goes over it): an empty view until
 * {@link #connect}.
 */
public final class DeferredFleetStatus implements FleetStatus {

    private volatile FleetStatus target = () -> Optional.of(new JsonObject().put("reachable", false)
            .put("members", new io.vertx.core.json.JsonArray()));

    public void connect(FleetStatus status) {
        target = status;
    }

    @Override
    public Optional<JsonObject> view() {
        return target.view();
    }

    @Override
    public void changedHere() {
        target.changedHere();
    }
}
