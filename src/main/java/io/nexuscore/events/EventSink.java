package io.nexuscore.events;

import io.vertx.core.json.JsonObject;

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

    EventSink DISCARD = (type, data) -> { };
}
