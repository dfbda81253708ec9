package io.nexuscore.control;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.ForbiddenObject;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Tier;
import io.nexuscore.events.EventHub;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.misroute.MisrouteMeters;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The data path as the operator sees and drives it: {@code GET /tiers} (per tier: kernel counts,
 * pool, latency, misroutes), {@code POST /classifier/reload}, {@code GET /metrics} (Prometheus) and
 * {@code GET /healthz} (mode and attachment).
 */
final class DataPathRoutes {

    private static final System.Logger LOG = System.getLogger(DataPathRoutes.class.getName());
    private static final Set<String> JSON_TYPES = Set.of("application/json");

    private final ThresholdKeeper keeper;
    private final ControlPorts ports;
    private final TierStateView pools;
    private final ControlMetrics metrics;
    private final PrometheusMeterRegistry registry;
    private final EventHub events;
    private final ControlReplies replies;

    DataPathRoutes(ThresholdKeeper keeper, ControlPorts ports, TierStateView pools, ControlMetrics metrics,
                   PrometheusMeterRegistry registry, EventHub events, ControlReplies replies) {
        this.keeper = keeper;
        this.ports = ports;
        this.pools = pools;
        this.metrics = metrics;
        this.registry = registry;
        this.events = events;
        this.replies = replies;
    }

    void getTiers(RoutingContext ctx) {
        replies.blocking(ctx, () -> {
            ThresholdState thresholds = keeper.refresh();
            Map<Tier, Long> counters = ports.dataPath().tierCounters();
            Map<Tier, Map<String, Object>> poolState = pools.snapshot();
            JsonArray tiers = new JsonArray();
            for (Tier tier : Tier.values()) {
                Map<String, Object> pool = poolState.get(tier);
                tiers.add(new JsonObject()
                        .put("tier", tier.label())
                        .put("kernel_classified", counters.get(tier))
                        .put("pool", pool == null ? null : new JsonObject(new LinkedHashMap<>(pool)))
                        .put("latency", metrics.latency(tier))
                        .put("misroutes", MisrouteMeters.summary(registry, tier)));
            }
            return new JsonObject().put("mode", ports.dataPath().mode())
                    .put("thresholds", ThresholdKeeper.toJson(thresholds)).put("tiers", tiers);
        }).onSuccess(body -> ControlReplies.json(ctx, 200, body));
    }

    void reload(RoutingContext ctx) {
        Optional<JsonObject> body = JsonBodies.object(ctx, true, JSON_TYPES);
        Optional<Path> object = Optional.empty();
        if (body.isPresent()) {
            JsonBodies.allowOnly(body.get(), Set.of("object"));
            Optional<String> path = JsonBodies.string(body.get(), "object", false);
            if (path.isPresent()) {
                Path p = Path.of(path.get());
                if (!p.isAbsolute()) {
                    throw new ProblemException(ProblemType.INVALID_VALUE, "object must be an absolute path on the router's host", "object");
                }
                object = Optional.of(p);
            }
        }
        Optional<Path> requested = object;
        replies.blocking(ctx, () -> {
            try {
                return ports.dataPath().reload(requested);
            } catch (NotInKernelMode e) {
                throw new ProblemException(ProblemType.NOT_IN_KERNEL_MODE, e.getMessage());
            } catch (ForbiddenObject e) {
                throw new ProblemException(ProblemType.FORBIDDEN_OBJECT, "rule " + e.getMessage(), "object");
            } catch (IllegalArgumentException e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, e.getMessage(), "object");
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "classifier reload failed", e);
                throw new ProblemException(ProblemType.RELOAD_FAILED, String.valueOf(e.getMessage()));
            }
        }).onSuccess(result -> {
            JsonObject json = new JsonObject()
                    .put("object", requested.map(Path::toString).orElse(null))
                    .put("old_program_ids", new JsonObject(new LinkedHashMap<>(result.oldProgramIds())))
                    .put("new_program_ids", new JsonObject(new LinkedHashMap<>(result.newProgramIds())));
            events.publish("reload", json);
            ControlReplies.json(ctx, 200, json);
        });
    }

    void getMetrics(RoutingContext ctx) {
        replies.blocking(ctx, () -> {
            keeper.refresh();
            metrics.refresh(ports.dataPath());
            metrics.refreshAdaptive(ports.adaptive());
            return registry.scrape();
        }).onSuccess(text -> ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .end(text));
    }

    void getHealth(RoutingContext ctx) {
        replies.blocking(ctx, ports.dataPath()::attachment).onSuccess(attachment -> ControlReplies.json(ctx, 200,
                new JsonObject()
                        .put("status", "ok")
                        .put("mode", ports.dataPath().mode())
                        .put("attachment", new JsonObject(new LinkedHashMap<>(attachment)))));
    }
}
