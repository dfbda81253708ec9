package io.nexuscore.dataplane;

import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.tenants.TenantFloors;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.limits.LimitGate;
import io.nexuscore.tiers.TierBackend;
import io.vertx.core.WorkerExecutor;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the data plane's request pipeline is built from, read once when the
 * {@link DataPlaneHandler} is constructed. {@link #of} takes what every data plane needs; the
 * {@code with...} methods replace one of the rest, whose defaults are: no tenant floors for unmarked
 * connections, no fallback tiers, an empty in-memory key store, tracing off, no targets beyond the
 * tiers.
 *
 * @param resolverPool where kernel-mode resolution runs; required (non-null) when {@code resolver.blocking()}
 * @param floors       tenant floors by client address (see {@link TenantFloors#authoritative()})
 * @param fallbacks    per tier, the tier that serves its requests when it is full or has no admitted
 *                     upstream endpoint
 * @param keys         API keys naming tenants ({@code Authorization: Bearer}), managed by the control plane
 * @param tracing      records one span per inference request
 * @param targets      the models and the embeddings target beyond the tiers
 * @param limits       tenant limits: every inference request is admitted through it (default: none set)
 */
public record DataPlaneDependencies(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                                    Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                                    LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors floors,
                                    Map<Tier, Tier> fallbacks, TenantKeys keys, RequestTracing tracing,
                                    ApiTargets targets, LimitGate limits) {

    public DataPlaneDependencies {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(backends, "backends");
        Objects.requireNonNull(models, "models");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(latencyRecorder, "latencyRecorder");
        Objects.requireNonNull(floors, "floors");
        Objects.requireNonNull(fallbacks, "fallbacks");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(tracing, "tracing");
        Objects.requireNonNull(targets, "targets");
        Objects.requireNonNull(limits, "limits");
        if (resolver.blocking() && resolverPool == null) {
            throw new IllegalArgumentException("a blocking tier resolver needs a worker pool");
        }
    }

    /** What every data plane needs, the rest at its defaults. */
    public static DataPlaneDependencies of(DataPlaneConfig config, TierResolver resolver,
                                           Map<Tier, TierBackend> backends, Map<Tier, String> models,
                                           DataPlaneMetrics metrics, EventSink events,
                                           LatencyRecorder latencyRecorder, WorkerExecutor resolverPool) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, TenantFloors.NONE, Map.of(), TenantKeys.inMemory(), RequestTracing.OFF, ApiTargets.NONE,
                LimitGate.none());
    }

    /** @param floors tenant floors by client address, or for connections whose socket carries no kernel mark */
    public DataPlaneDependencies withFloors(TenantFloors floors) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }

    public DataPlaneDependencies withFallbacks(Map<Tier, Tier> fallbacks) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }

    public DataPlaneDependencies withKeys(TenantKeys keys) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }

    public DataPlaneDependencies withTracing(RequestTracing tracing) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }

    public DataPlaneDependencies withTargets(ApiTargets targets) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }

    public DataPlaneDependencies withLimits(LimitGate limits) {
        return new DataPlaneDependencies(config, resolver, backends, models, metrics, events, latencyRecorder,
                resolverPool, floors, fallbacks, keys, tracing, targets, limits);
    }
}
