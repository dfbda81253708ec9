package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.util.Optional;

/**
 * The fleet status the control plane is built with before the fleet is joined (the control plane
 * restores the state file first, then the fleet's policy goes over it): an empty view until
 * {@link #connect}.
 */
public final class DeferredFleetStatus implements FleetStatus {

    private volatile FleetStatus target;

    /** Until connected: this router's name, not reachable yet, no members, no policy. */
    public DeferredFleetStatus(String node, String cluster) {
        JsonObject joining = new JsonObject().put("node", node).put("cluster", cluster).put("reachable", false)
                .put("policy", null).put("members", new io.vertx.core.json.JsonArray());
        target = () -> Optional.of(joining.copy());
    }

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
