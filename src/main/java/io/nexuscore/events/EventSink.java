package io.nexuscore.events;

import io.vertx.core.json.JsonObject;
import java.util.function.Supplier;

/**
 * Where the router's features publish operator-visible events (GET /events). Implementations never
 * block the caller and never throw: the data plane publishes one event per request.
 *
 * Event types: {@code request} (a completed request: tier, tenant, latency), {@code threshold}
 * (a threshold change and its source: api, bpftool, kernel), {@code reload} (programs swapped),
 * {@code recalibration} (the kernel feedback loop moved nano_max), {@code calibration} (it refitted
 * the token estimate's gain), {@code fleet} (in a fleet: a policy version this router wrote, took or
 * reconciled, with the router it came from).
 */
public interface EventSink {

    void publish(String type, JsonObject data);

    /**
     * Publishes an event whose data is built only if someone reads it (an SSE subscriber, or a
     * resume from the history): for events published per request, where building a JSON tree per
     * request cost the event loops ~2 % of their samples whether or not anyone listened. The
     * supplier may run later, on another thread, and more than once: it must be immutable.
     */
    default void publishLazily(String type, Supplier<JsonObject> data) {
        publish(type, data.get());
    }

    EventSink DISCARD = (type, data) -> { };
}
