package io.nexuscore.control;

import io.nexuscore.classify.Tier;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantId;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * {@code /tenants}: a tenant's prefix policy (its floor tier) and its API keys, which the control
 * plane only ever holds and shows as their hashes. A change made here is announced to the fleet.
 */
final class TenantRoutes {

    private static final Set<String> JSON_TYPES = Set.of("application/json");

    private final ControlPorts ports;
    private final ControlReplies replies;

    TenantRoutes(ControlPorts ports, ControlReplies replies) {
        this.ports = ports;
        this.replies = replies;
    }

    /** Tenants with a prefix policy, API keys or both; keys only as their hashes. */
    void list(RoutingContext ctx) {
        replies.blocking(ctx, () -> {
            Map<String, TenantPolicy> policies = ports.tenants().list();
            Map<String, List<String>> keys = ports.keys().list();
            SortedSet<String> ids = new TreeSet<>(policies.keySet());
            ids.addAll(keys.keySet());
            JsonArray list = new JsonArray();
            ids.forEach(id -> list.add(tenantJson(id, policies.get(id), keys.getOrDefault(id, List.of()))));
            return new JsonObject().put("tenants", list);
        }).onSuccess(body -> ControlReplies.json(ctx, 200, body));
    }

    /** Replaces the tenant's API key hashes ({@code sha256:<hex>} each; an empty list removes them). */
    void putKeys(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject body = JsonBodies.object(ctx, false, JSON_TYPES).orElseThrow();
        JsonBodies.allowOnly(body, Set.of("keys"));
        if (!(body.getValue("keys") instanceof JsonArray array)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "keys must be an array of strings", "keys");
        }
        List<String> hashes = new ArrayList<>();
        for (Object o : array) {
            if (!(o instanceof String hash)) {
                throw new ProblemException(ProblemType.INVALID_REQUEST, "keys must be an array of strings", "keys");
            }
            hashes.add(hash);
        }
        replies.blocking(ctx, () -> {
            try {
                return ports.keys().put(id, hashes);
            } catch (TenantKeys.KeyInUse e) {
                throw new ProblemException(ProblemType.CONFLICT, e.getMessage(), "keys");
            } catch (IllegalArgumentException e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, "keys: " + e.getMessage(), "keys");
            }
        }).onSuccess(stored -> {
            ports.fleet().changedHere();
            ControlReplies.json(ctx, 200, new JsonObject().put("id", id).put("keys", new JsonArray(stored)));
        });
    }

    void put(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject body = JsonBodies.object(ctx, false, JSON_TYPES).orElseThrow();
        JsonBodies.allowOnly(body, Set.of("prefix", "floor"));
        String prefixText = JsonBodies.string(body, "prefix", true).orElseThrow();
        String floorText = JsonBodies.string(body, "floor", true).orElseThrow();
        TenantPolicy policy;
        try {
            policy = new TenantPolicy(Ipv4Prefix.parse(prefixText), Tier.fromLabel(floorText));
        } catch (IllegalArgumentException e) {
            String field = e.getMessage().startsWith("unknown tier") ? "floor" : "prefix";
            throw new ProblemException(ProblemType.INVALID_VALUE, field + ": " + e.getMessage(), field);
        }
        replies.blocking(ctx, () -> {
            try {
                return ports.tenants().put(id, policy);
            } catch (TenantPolicies.PrefixInUse | TenantPolicies.Full e) {
                throw new ProblemException(ProblemType.CONFLICT, e.getMessage(), "prefix");
            }
        }).onSuccess(created -> {
            ports.fleet().changedHere();
            if (created) {
                ctx.response().putHeader(HttpHeaders.LOCATION, "/tenants/" + id);
            }
            ControlReplies.json(ctx, created ? 201 : 200, tenantJson(id, policy, ports.keys().get(id)));
        });
    }

    void delete(RoutingContext ctx) {
        String id = tenantId(ctx);
        // Its keys go with it: a key must not name a tenant that no longer exists. So do its limits.
        replies.blocking(ctx, () -> ports.tenants().delete(id) | ports.keys().delete(id)
                | ports.limits().store().delete(id)).onSuccess(existed -> {
            if (existed) {
                ports.fleet().changedHere();
                ctx.response().setStatusCode(204).end();
            } else {
                replies.sendProblem(ctx, ProblemType.NOT_FOUND.problem("no tenant '" + id + "'"));
            }
        });
    }

    private static String tenantId(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        if (!TenantId.valid(id)) {
            throw new ProblemException(ProblemType.INVALID_VALUE, "tenant id must be " + TenantId.RULE, "id");
        }
        return id;
    }

    /** @param policy null for a tenant known by its API keys only */
    private static JsonObject tenantJson(String id, TenantPolicy policy, List<String> keys) {
        JsonObject json = new JsonObject().put("id", id);
        if (policy != null) {
            json.put("prefix", policy.prefix().toString()).put("floor", policy.floor().label());
        }
        return json.put("keys", new JsonArray(keys));
    }
}
